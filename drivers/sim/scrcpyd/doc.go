// Package scrcpyd is a scrcpy-server for the virtual phone: the emulated adbd
// calls Serve when the phone's shell runs
//
//	CLASSPATH=/data/local/tmp/scrcpy-server.jar app_process / com.genymobile.scrcpy.Server VERSION key=value...
//
// so that the Android driver can stream and control a sim phone exactly as a
// real one. A Server is of one version (Server.Version, ServerVersion by
// default) and, like the real server, starts only when the client sends
// exactly that version: any other prints "[server] ERROR: The server version
// (V) does not match the client (C)" with the exception's stack trace and
// exits with status 1. It speaks the wire format of the 3.x or 4.x version
// it is, with H.264 video from the sim's sdk.Streamer and no audio, over
// either tunnel: with tunnel_forward=true it listens on its local abstract
// socket (scrcpy, or scrcpy_%08x with scid) and writes the dummy byte on
// the first socket; with tunnel_forward=false (scrcpy's default) it
// connects to that socket, which the client's `adb reverse` holds, once per
// enabled socket in DesktopConnection's order (video, audio, control), and
// sends no dummy byte. Either way the device meta goes first on the first
// socket. When nothing listens there, the server prints "[server] ERROR:
// Connection refused" and the IOException's stack trace, and exits with
// status 1, as the real one does. The adb face aborts app_process before the
// server runs when its jar was not pushed or the class is another.
//
// Control messages are read by a reader of the package's own, written from
// the real server's ControlMessageReader.java (3.x reads types 0–17, 4.0
// 0–21, 4.1 0–22), not with the Android driver's client, so that a layout
// bug in the client fails a test. As in the real server, a type the version
// does not know is a protocol error that ends the controller and with it
// the whole server (4.x logs "Control protocol error" with the exception);
// UHID messages and SCAN_FILE are read and have no effect on the virtual
// phone; camera messages on a display session, and RESIZE_DISPLAY on a
// session without new_display, kill the control thread as the real
// server's exceptions do. INJECT_TEXT types only what the virtual keyboard's
// key map can (ASCII, and the accented letters of its dead keys) and logs
// "Could not inject char u+XXXX" for each other UTF-16 unit; a key with
// Ctrl types no character, and Ctrl+A selects the focused field's text, as
// a TextView's shortcut does, when the driver can (the sim's SelectAll).
//
// Clipboard, as Controller.java: with clipboard_autosync (the default) the
// session listens to the phone's clipboard once it is connected (the sim's
// WatchClipboard) and sends a CLIPBOARD message for each change made by
// another path (an app's copy, SetClipboard from another client), never for
// its own SET_CLIPBOARD, and nothing for what was copied before it
// started; GET_CLIPBOARD then sends nothing. Without autosync nothing comes
// unasked, and GET_CLIPBOARD answers with the clipboard when it is not
// empty. GET_CLIPBOARD's copy or cut key copies nothing (nothing is ever
// selected on the virtual phone). SET_CLIPBOARD of the text the clipboard
// holds sets nothing (Device.setClipboardText), and a sequence other than 0
// is acknowledged. The clipboard is the phone's own when the driver has one
// (the sim's), else one per session, which tells of no changes.
//
// Video size, as each version computes it from the display's current size
// (so again after a rotation): 3.x rounds max_size down to a multiple of 8
// and takes Size.limit(max_size).round8() (the major side down, the minor
// to the nearest multiple of 8, never above the major); 4.0 takes
// Size.constrain with the encoder's capabilities (max_size, capped by the
// codec's largest side, aligned first); 4.1 the same without them. 4.x's
// alignment is the virtual encoder's 2 (1 with 4.1's
// ignore_video_encoder_constraints) raised to min_size_alignment (1, 2, 4,
// 8 or 16). new_display's display is the size asked, or the main
// display's in its natural orientation, kept in 3.x and aligned in 4.x; its
// video is sized as any. The sim renders its stream at that size
// (StreamVideoFit), so the 3.x header, the 4.x session packets, the SPS and
// the size a touch event must name all agree.
//
// Video: frames only when the screen changes (a surface encoder gets no
// input from a still screen), the first change after 10 s a key frame
// (DEFAULT_I_FRAME_INTERVAL) when the driver takes an interval (the sim
// does), and RESET_VIDEO restarts
// the encoder as SurfaceEncoder does: 4.x sends a session packet, then a
// config packet and a key frame; 3.x a config packet and a key frame.
//
// list_encoders, list_displays, list_cameras and list_apps print what the
// real server prints for them (LogUtils.java: the one software H.264
// encoder, display 0 and the face's background displays, no cameras, the
// driver's apps) and exit with status 0 before any connection.
//
// Input is turned into the driver's actions: a finger that goes down and up
// in place is a tap (a long press when held 500 ms), one that moves is a
// swipe; keys act on release; text and pasted clipboards are typed.
// ROTATE_DEVICE turns the display between portrait and landscape as the
// real server does; the capture restarts at the turned size, and touches
// made for the old size are ignored. What the sim cannot do is logged as
// the real server would: turning the display off while mirroring.
//
// Displays: display_id=N shows and drives an existing display of the phone;
// new_display=[WxH][/DPI] makes a background display (through the adb face,
// which lists it in `uiautomator dump --windows`), prints "[server] INFO:
// New display: WxH/DPI (id=N)" as the real server does, routes the
// session's video, input and START_APP to it, and removes it when the
// session ends (the real server's vd_destroy_content). START_APP logs
// `Starting app "LABEL" [PACKAGE] on display N...`, or `No app found for
// package "NAME"`, with the real server's words.
package scrcpyd
