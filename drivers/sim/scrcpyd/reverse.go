package scrcpyd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
)

// tunnelForward reports whether args ask for a forward tunnel, as
// Options.parse reads tunnel_forward: Boolean.parseBoolean of its last
// value, false when it is missing.
func tunnelForward(args []string) bool {
	forward := false
	for _, arg := range args {
		if v, ok := strings.CutPrefix(arg, "tunnel_forward="); ok {
			forward = strings.EqualFold(v, "true")
		}
	}
	return forward
}

// connect makes the session's connections through the client's reverse
// tunnel, as DesktopConnection.open does with tunnel_forward=false: one
// connect to the local abstract socket per enabled socket, in the order
// video, audio, control, and no dummy byte (the client accepts, it need not
// probe). A refused connect is the real server's IOException: it is logged
// with its stack trace, the sockets made so far are closed, and the server
// exits with status 1.
func (s *session) connect(ctx context.Context, dial func(context.Context) (net.Conn, error)) error {
	for _, c := range []struct {
		on   bool
		conn *net.Conn
		line int // the line of DesktopConnection.open that connects it
	}{{s.o.video, &s.video, 93}, {s.o.audio, &s.audio, 96}, {s.o.control, &s.control, 99}} {
		if !c.on {
			continue
		}
		conn, err := dial(ctx)
		if err != nil {
			s.closeAll()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			msg := "Connection refused"
			if !errors.Is(err, syscall.ECONNREFUSED) {
				msg = err.Error()
			}
			s.log.log(levelError, "%s", msg)
			// What IOException.printStackTrace prints on an Android 9
			// phone with scrcpy 3.3.4.
			s.log.trace("java.io.IOException: %s\n\tat android.net.LocalSocketImpl.connectLocal(Native Method)\n\tat android.net.LocalSocketImpl.connect(LocalSocketImpl.java:292)\n\tat android.net.LocalSocket.connect(LocalSocket.java:145)\n\tat com.genymobile.scrcpy.device.DesktopConnection.connect(DesktopConnection.java:43)\n\tat com.genymobile.scrcpy.device.DesktopConnection.open(DesktopConnection.java:%d)\n\tat com.genymobile.scrcpy.Server.scrcpy(Server.java:104)\n\tat com.genymobile.scrcpy.Server.internalMain(Server.java:271)\n\tat com.genymobile.scrcpy.Server.main(Server.java:215)\n\tat com.android.internal.os.RuntimeInit.nativeFinishInit(Native Method)\n\tat com.android.internal.os.RuntimeInit.main(RuntimeInit.java:340)\n", msg, c.line)
			return fmt.Errorf("scrcpy server: connect: %w", err)
		}
		*c.conn = conn
	}
	return nil
}
