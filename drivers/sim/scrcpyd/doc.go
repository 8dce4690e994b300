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
// Input is turned into the driver's actions: a finger that goes down and up
// in place is a tap (a long press when held 500 ms), one that moves is a
// swipe; keys act on release; text and pasted clipboards are typed. What the
// sim cannot do is logged as the real server would: rotation, turning the
// display off while mirroring, the phone's own clipboard (scrcpyd keeps one
// per session).
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
