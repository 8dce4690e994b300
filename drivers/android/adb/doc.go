// Package adb is a client of the adb server, the person's own "adb
// start-server" daemon: it speaks the server's smart-socket protocol over
// one connection per request and never runs an adb command per action.
//
// # Server address
//
// New and Dial find the server like the adb command does: Options.Addr if
// set ("HOST:PORT", or a socket spec "tcp:PORT", "tcp:HOST:PORT",
// "localabstract:NAME", "localfilesystem:PATH"); else ADB_SERVER_SOCKET (a
// socket spec); else ANDROID_ADB_SERVER_ADDRESS (host) and
// ANDROID_ADB_SERVER_PORT (port); else 127.0.0.1:5037.
//
// When nothing listens at a local address, the client runs "adb -P PORT
// start-server" (or "adb -L SPEC start-server" for a unix socket) once,
// with Options.ADBPath or the adb found on PATH, and connects again. Without
// an adb binary the error wraps ErrADBNotInstalled and tells the person how
// to install it. Options.NoStart turns starting off; a remote server is never
// started.
//
// # Services
//
//	c, err := adb.Dial(ctx, adb.Options{})
//	for ev, err := range c.WatchDevices(ctx) { … }      // added, removed, changed
//	d := c.Device(serial)
//	res, err := d.Shell(ctx, adb.Quote("input", "tap", "10", "20"))
//	xml, err := d.ExecOutput(ctx, "uiautomator dump /dev/tty")
//	err = d.Push(ctx, r, "/sdcard/Pinky/a.png", 0o644, time.Now())
//	port, err := d.Forward(ctx, "tcp:0", "localabstract:scrcpy_0001")
//	conn, err := c.OpenStream(ctx, serial, "localabstract:scrcpy_0001")
//
// Host services: Version, Devices (adb devices -l), TrackDevices and
// WatchDevices (host:track-devices-l), Connect, Disconnect, ListForward and
// Kill. Device services go through host:transport:SERIAL: Shell (shell v2
// with separate stdout, stderr and exit code; "shell:" on devices without
// the shell_v2 feature), Exec and ExecOutput ("exec:", binary-safe, with a
// TTY), Sync (STAT, LIST, SEND, RECV), Reverse, and OpenStream for any raw
// device socket.
//
// # Contexts
//
// Every call takes a context, and cancelling it closes the call's
// connection. For the streams a call returns (OpenStream, Exec, Sync,
// TrackDevices) the context lasts as long as the stream, like
// exec.CommandContext. Pass a context with a deadline: a server that accepts
// and never answers is only left when the context ends.
//
// # Errors
//
// A FAIL reply is a *ServerError that carries the server's message. When
// the message names a device condition, the error also wraps
// ErrDeviceNotFound, ErrUnauthorized, ErrOffline, ErrNoPermission or
// ErrFileNotFound, which wrap the matching drivers/sdk errors, so a driver
// can return them as they are. DeviceInfo.Err turns a device's state into
// the same errors, with text for the person ("accept the prompt on the
// phone"). Nothing listening gives ErrServerNotRunning or
// ErrADBNotInstalled; a peer that does not speak the protocol gives
// ErrProtocol.
//
// # Limits
//
// Sync uses protocol v1: sizes and times are 32-bit, and no stat_v2, ls_v2
// or compression. Shell and ExecOutput keep the whole output in memory. The
// legacy "shell:" path merges stderr into stdout and reads the exit code
// from a marker the command line prints last (ExitUnknown when the command
// replaced the shell or was killed).
package adb
