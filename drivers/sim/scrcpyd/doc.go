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
// it is, over a forward tunnel only, with H.264 video from the sim's
// sdk.Streamer and no audio. The adb face aborts app_process before the
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
// server's exceptions do. GET_CLIPBOARD presses nothing the virtual phone
// can copy and answers only without clipboard_autosync, and only when the
// clipboard is not empty; SET_CLIPBOARD acknowledges a sequence other than
// 0. The clipboard is the phone's own when the driver has one (the sim's),
// else one per session.
//
// Video: a key frame at least every 10 s (DEFAULT_I_FRAME_INTERVAL) when
// the driver takes an interval (the sim does), and RESET_VIDEO restarts
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
// swipe; keys act on release; text and pasted clipboards are typed. What the
// sim cannot do is logged as the real server would: rotation, turning the
// display off while mirroring.
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
