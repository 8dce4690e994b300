// Package adbd gives a virtual phone an "adb face": an emulated adbd over
// TCP that Debian's adb 29 server attaches with `adb connect HOST:PORT`, so
// that adb, scrcpy's launcher and adb client libraries work against the sim.
//
//	srv, err := adbd.Listen("127.0.0.1:0", adbd.Config{Driver: simDriver, DeviceID: "sim-android-1"})
//	// adb connect 127.0.0.1:PORT; adb -s 127.0.0.1:PORT shell getprop
//	defer srv.Close()
//
// # What is emulated
//
// The transport (protocols.md section 6): the CNXN handshake with a device
// banner (ro.product.name, model, device and features
// shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir), version and maxdata
// negotiation (1 MiB payloads, byte-sum checksums only until the server agrees
// to version 0x01000001), no AUTH (like ro.adb.secure=0) or, with
// Config.Unauthorized, an AUTH loop that never accepts so that adb lists the
// device as unauthorized, and OPEN/OKAY/WRTE/CLSE streams with one WRTE in
// flight per direction, many at once, on several connections, opened by the
// server or, for reverse forwards, by the phone.
//
// Services: shell:CMD (stdout and stderr merged, no exit code),
// shell,v2,…:CMD (shell protocol v2: stdin, stdout, stderr, close-stdin,
// exit code), an interactive shell for an empty command (with a prompt and
// echo when a pty is asked for), exec:CMD, sync: (STAT, STA2, LST2, LIST,
// LIS2, SEND, RECV, QUIT; a folder lists "." and ".." first, as adbd's
// readdir gives them), framebuffer: (adbd's header, version 2 with a colour
// space from Android 9, then RGBA pixels), localabstract:NAME (connections
// to Device.ListenAbstract listeners, for `adb forward tcp:N
// localabstract:NAME`), and reverse: (below). localabstract:NAME and
// tcp:PORT held by a reverse forward go on to the host, as on a phone;
// every other service is refused.
//
// # Reverse forwards
//
// `adb reverse` works as adbd's listeners do (adb_listeners.cpp,
// handle_forward_request): reverse:forward:[norebind:]REMOTE;LOCAL binds
// the phone's localabstract:NAME or tcp:PORT (tcp:0 picks a free port from
// 32768 and answers it after the OKAY) and answers OKAY, or FAIL with adbd's
// texts ("bad forward: …", "cannot rebind existing socket", "cannot bind
// listener: Address already in use" for a name an app or another forward
// holds, "cannot bind listener: bad port number 'N'", "cannot bind
// listener: unknown socket specification:…"; local:, localreserved: and
// localfilesystem: are not served); an existing REMOTE is rebound, whichever
// transport made it. reverse:killforward:REMOTE answers OKAY or "listener
// 'REMOTE' not found", reverse:killforward-all removes every forward, and
// reverse:list-forward lists "host-N REMOTE LOCAL" lines, N numbering the
// face's connections where adbd gives its socket's descriptor. A forward
// ends with the transport that made it.
//
// A connection made on the phone to REMOTE (Device.DialAbstract,
// Device.DialTCP; the face's scrcpy server with tunnel_forward=false) makes
// the phone send OPEN(id, 0, "LOCAL\0") with LOCAL exactly as the client
// gave it, which is all Debian's patched server accepts; the connection
// closes if the server refuses. With no forward and no listener, a dial
// fails with ECONNREFUSED.
//
// Files live in a temporary folder per phone (removed by Close) with /sdcard,
// /sdcard/Download and /data/local/tmp; /storage/emulated/0 is /sdcard. When
// the driver implements sdk.Filer, /sdcard/Pinky is the phone's Pinky folder.
//
// # The shell
//
// A tiny interpreter: words with '…', "…" and \ quoting, VAR=value prefixes
// (ignored), exec, pipes, redirections (< > >> 2> 2>&1 >&2, /dev/null), and
// lists joined by ;, && and ||. No variables, globs, or control structures.
// Commands, acting on the phone through sdk.Driver:
//
//	getprop [KEY]                          system properties from the driver's device info,
//	                                       a known model's real names (a Pixel 8 is "shiba")
//	wm size | density | dismiss-keyguard   "Physical size: 1080x2400"
//	uiautomator dump [--compressed] [FILE|/dev/tty]
//	                                       UI Automator XML of Screen (or the captured
//	                                       fixture's bytes), then "UI hierchary dumped to: FILE"
//	uiautomator dump --windows FILE        Android 13's multi-display document (<displays>):
//	                                       display 0 and each background display, a window
//	                                       per root element; below Config.SDKLevel 33 the
//	                                       option is ignored, as on older phones
//	dumpsys window | activity activities | power | input_method | package [PKG]
//	        | SurfaceFlinger --display-id | display | input
//	                                       display and input give the rotation
//	                                       (mCurrentOrientation, SurfaceOrientation),
//	                                       window its mCurrentRotation
//	                                       window lists the focused app window with its
//	                                       fl= flags, SECURE for a world's secure app (the
//	                                       driver's SecureWindow), whose screencap is black
//	input [SOURCE] tap X Y | swipe X1 Y1 X2 Y2 [MS] | text STR | keyevent CODE|NAME… | press
//	am start [-W] -n PKG/ACT | -a android.intent.action.VIEW -d URL
//	        | -a android.intent.action.MAIN [-c android.intent.category.LAUNCHER] -p PKG
//	am force-stop PKG;  am broadcast …    (no receivers: "Broadcast completed: result=0")
//	monkey -p PKG -c android.intent.category.LAUNCHER 1
//	pm list packages [-3|-s] [FILTER] | list features | path PKG | clear PKG
//	pm install [FLAGS] FILE | -S SIZE (stdin); cmd package install …; pm uninstall PKG
//	                                       (the package read from the APK's binary
//	                                       manifest, listed until uninstalled; never run)
//	cmd package resolve-activity --brief PKG | has-feature NAME | list packages …
//	cmd clipboard get text                 the driver's clipboard, when it keeps one
//	run-as PKG …                           fails as on a user build: "package not
//	                                       debuggable", or "unknown package"
//	content insert|update|query --uri content://settings/NS [--bind name:s:KEY
//	        --bind value:T:VALUE] [--where "name='KEY'"]   the same settings
//	settings get|put|delete|list system|secure|global [KEY [VALUE]]   (in memory;
//	                                       global device_name is the model; system
//	                                       user_rotation with accelerometer_rotation 0
//	                                       turns the screen)
//	screencap [-p] [-d ID] [FILE]          PNG from the driver's Screenshot with -p or a
//	                                       FILE.png, else raw: width, height, format 1
//	                                       (RGBA_8888), from Android 9 colour space 1
//	                                       (sRGB), as 32-bit words, then the pixels
//	echo, cat, ls [-l -a -d], rm [-r -f], mkdir [-p], touch, grep [-E -F -i -v -q -c],
//	cd, pwd, id, whoami, sleep, sh [-c CMD], true, false, exit [N], export
//	app_process …                          Config.AppProcess (how scrcpy's server starts)
//
// Config.Commands adds commands or replaces these, for fault tests (a
// command that prints garbage, or cuts its stream with CutStream).
//
// # Background displays
//
// Device.CreateDisplay and RemoveDisplay (an sdk.Displayer) make and remove
// a background display through the driver's sdk.Displayer, as a scrcpy
// server started with new_display does on a real phone: the face's scrcpy
// server (package scrcpyd) calls them, and `uiautomator dump --windows`
// lists the displays so made. A display made on the driver directly, not
// through the face, is not listed.
//
// An unknown command prints "/system/bin/sh: NAME: inaccessible or not
// found" and exits 127. Driver errors print "Error: …" and exit 1, except
// where a real phone exits 0: am start prints why it started nothing
// ("Error: Activity not started, unable to resolve Intent …" for a URL
// scheme no stock app takes, "Error type 3" for a missing activity) on
// stderr (stdout with -W) and exits 0, and input exits 0 when nothing takes
// its events (a point off the screen, no focused field, the screen off).
// app_process aborts ("Aborted", exit 134) unless its CLASSPATH's first
// entry was pushed to the phone and its class is Config.AppProcessClass.
// In UI dumps an empty field's text is its hint, as in real dumps.
//
// # What is not emulated
//
// No real pty: the three terminals adbd gives a command are modelled
// (pty.go): shell: and exec: a raw pty (one stream, /dev/tty works),
// shell,v2,raw: pipes (no /dev/tty: `uiautomator dump /dev/tty` prints only
// its trailer, `tty` says "not a tty"), shell,v2,pty: a cooked pty (stderr
// joins stdout, "\n" leaves as "\r\n", stdin echoed, close-stdin ignored);
// no job control or window size. No abb_exec, no logcat, no
// root/remount/reboot/tcpip services, no jdwp. Apps have no
// real activities: every app reports PKG/.MainActivity.
package adbd
