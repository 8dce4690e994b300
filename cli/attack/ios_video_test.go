package attack_test

// Attacks on the iPhone's broadcast link (issue 12, item 14): someone on
// the same Wi-Fi as the phone and the computer records, rewrites or feeds
// the TCP connection that carries the phone's screen to pinky-driver-ios.
// Each test runs the real processes: the daemon with pinky-driver-ios, the
// virtual iPhone's faces as `pinky-driver-sim --wda-listen --video-dial`,
// an agent over `pinky mcp`, and the attacker as a relay in the middle.

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/ios/video"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testdep"
)

// Patterns of H.264 and JPEG that the clear version-1 link carried
// verbatim: an Annex B start code before an SPS, an IDR slice or another
// slice, and the opening of the stills' JPEGs (Go's encoder, which the
// virtual phone uses). Random ciphertext holds one of them by chance about
// once in 2^40 bytes.
var clearPatterns = []struct {
	name string
	b    []byte
}{
	{"an SPS after a start code", []byte{0, 0, 0, 1, 0x67}},
	{"an IDR slice after a start code", []byte{0, 0, 0, 1, 0x65}},
	{"a slice after a start code", []byte{0, 0, 0, 1, 0x41}},
	{"a JPEG's opening", []byte{0xff, 0xd8, 0xff, 0xdb, 0x00, 0x84}},
}

// inClear names the first pattern of clear video that b holds, or "".
func inClear(b []byte) string {
	for _, p := range clearPatterns {
		if bytes.Contains(b, p.b) {
			return p.name
		}
	}
	return ""
}

// iPhone is a virtual iPhone paired the person's way and driven by the
// daemon's pinky-driver-ios, whose broadcast the test starts.
type iPhone struct {
	e          *e2e.Env
	logs       *e2e.Buffer // the daemon's log, the driver's lines included
	id, secret string
	wdaPort    string
	videoAddr  string // where the driver listens for the broadcast
	stopFace   func() // stops the running face
}

func iosFreePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// newIPhone pairs a virtual iPhone with `pinky ios add --video-listen`,
// starts the daemon and the phone's WebDriverAgent face, and waits until
// the daemon lists the phone online. The broadcast is not started.
func newIPhone(t *testing.T) *iPhone {
	t.Helper()
	e := e2e.New(t)
	drivers := filepath.Join(e.Home, "drivers")
	os.MkdirAll(drivers, 0o700)
	b, err := os.ReadFile(e2e.Bin.IOS)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(drivers, "pinky-driver-ios"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	p := &iPhone{e: e, wdaPort: iosFreePort(t), videoAddr: "127.0.0.1:" + iosFreePort(t)}
	out, errs, code := e.Run("ios", "add", "Test iPhone", "--wda", "http://127.0.0.1:"+p.wdaPort,
		"--mjpeg", "off", "--video-listen", p.videoAddr, "--app", "com.pinky.sim.shop=Shop")
	if code != 0 {
		t.Fatalf("pinky ios add: exit %d: %s%s", code, out, errs)
	}
	m := regexp.MustCompile(`added Test iPhone \((\S+)\)\npairing secret: (\S+)\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("pinky ios add printed %q; want the id and the pairing secret", out)
	}
	p.id, p.secret = m[1], m[2]
	_, p.logs = e.DaemonLog("--console", "off")
	p.face(t, false, "")
	p.online()
	return p
}

// face runs the phone's WebDriverAgent face and, with broadcast, its
// broadcast dialing dial, until the test ends or the returned stop. A face
// already running is stopped first.
func (p *iPhone) face(t *testing.T, broadcast bool, dial string) (stop func()) {
	t.Helper()
	if p.stopFace != nil {
		p.stopFace() // its WebDriverAgent port is the new face's
	}
	args := []string{"--wda-listen", "127.0.0.1:" + p.wdaPort, "--wda-mjpeg=false"}
	if broadcast {
		args = append(args, "--video-dial", dial, "--video-device", p.id)
	}
	c := exec.Command(e2e.Bin.Sim, args...)
	c.Env = append(os.Environ(), "PINKY_SIM_VIDEO_SECRET="+p.secret) // not on the command line
	logs := &e2e.Buffer{}
	c.Stderr = logs
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			c.Process.Kill()
			c.Wait()
			if t.Failed() {
				t.Logf("pinky-driver-sim %v log:\n%s", args, logs.String())
			}
		})
	}
	t.Cleanup(stop)
	p.stopFace = stop
	return stop
}

// wifiRelay is the attacker on the Wi-Fi: it sits between the phone's
// broadcast and the driver, records every byte both ways, and may rewrite
// or add whole units of the protocol (a message, or after a version-2
// handshake a record) through edit.
type wifiRelay struct {
	ln     net.Listener
	target string
	// edit sees each unit from the phone (toDriver) or from the driver,
	// the n-th of its connection and direction, and returns what to send
	// in its place; nil sends it unchanged.
	edit func(toDriver bool, n int, unit []byte) []byte

	mu    sync.Mutex
	wire  bytes.Buffer
	conns int
}

func newWiFiRelay(t *testing.T, target string, edit func(toDriver bool, n int, unit []byte) []byte) *wifiRelay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &wifiRelay{ln: ln, target: target, edit: edit}
	var wg sync.WaitGroup
	var open []net.Conn
	wg.Go(func() {
		for {
			a, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", target)
			if err != nil {
				a.Close()
				continue
			}
			r.mu.Lock()
			r.conns++
			open = append(open, a, b)
			r.mu.Unlock()
			wg.Go(func() { r.pass(a, b, true) })
			wg.Go(func() { r.pass(b, a, false) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		r.mu.Lock()
		for _, c := range open {
			c.Close()
		}
		r.mu.Unlock()
		wg.Wait()
	})
	return r
}

func (r *wifiRelay) addr() string { return r.ln.Addr().String() }

func (r *wifiRelay) captured() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.wire.Bytes())
}

// pass relays one direction unit by unit. The first two units (HELLO, then
// AUTH or HANDSHAKE) are messages: a 4-byte length, then that many bytes.
// After them, version 1 goes on with messages and version 2 with records:
// a 2-byte length, then that many bytes. The HELLO's highest version tells
// which.
func (r *wifiRelay) pass(from, to net.Conn, toDriver bool) {
	defer from.Close()
	defer to.Close()
	br := bufio.NewReader(from)
	version := uint16(1)
	for n := 0; ; n++ {
		head := 4
		if n >= 2 && version >= 2 {
			head = 2
		}
		h := make([]byte, head)
		if _, err := io.ReadFull(br, h); err != nil {
			return
		}
		size := int(binary.BigEndian.Uint16(h))
		if head == 4 {
			size = int(binary.BigEndian.Uint32(h))
		}
		if size > 16<<20 {
			io.Copy(io.MultiWriter(to, r), io.MultiReader(bytes.NewReader(h), br)) // not this protocol
			return
		}
		unit := make([]byte, head+size)
		copy(unit, h)
		if _, err := io.ReadFull(br, unit[head:]); err != nil {
			return
		}
		if n == 0 && len(unit) >= 11 {
			version = binary.BigEndian.Uint16(unit[9:11]) // HELLO's max_version
		}
		if r.edit != nil {
			if e := r.edit(toDriver, n, unit); e != nil {
				unit = e
			}
		}
		r.Write(unit)
		if _, err := to.Write(unit); err != nil {
			return
		}
	}
}

func (r *wifiRelay) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.wire.Write(p)
}

// online waits until the daemon lists the phone online.
func (p *iPhone) online() {
	p.e.Eventually("the daemon lists the iPhone online", func() bool {
		var devs []api.Device
		p.e.JSON(&devs, "devices")
		return len(devs) == 1 && devs[0].ID == p.id && devs[0].Online
	})
}

// task runs an agent's short task on the phone through `pinky mcp`, so that
// the daemon records the broadcast, and returns the task's recording.
func (p *iPhone) task(t *testing.T, during func()) string {
	t.Helper()
	p.online() // a face started again leaves the phone offline for a moment
	h := p.e.StdioHost()
	h.Initialize()
	dev := e2e.OnDevice(p.id)
	h.OK("phone_connect", dev("task", "ios: look at the messages"), "LOCKED")
	p.e.Unlock(p.id)
	h.OK("phone_observe", dev("full", true), "Messages")
	if during != nil {
		during()
	}
	h.OK("phone_launch", dev("app", "Messages"), "Ben Okafor")
	h.OK("phone_tap", dev("text", "Ben Okafor"), "Did you get the tickets?")
	h.OK("phone_key", dev("key", "home"), "")
	h.OK("phone_launch", dev("app", "Shop"), "Wireless Headphones")
	h.OK("phone_swipe", dev("from", map[string]any{"x": 590, "y": 1900}, "to", map[string]any{"x": 590, "y": 900}), "")
	var ts []api.Task
	p.e.JSON(&ts, "history")
	if len(ts) == 0 {
		t.Fatal("no task in the history")
	}
	// The recorder writes what reads vouch for, a fragment about every
	// second: keep reading until some of the broadcast is in the file.
	var d api.TaskDetail
	p.e.EventuallyOr("the task's recording holds video", func() bool {
		h.OK("phone_observe", dev(), "")
		p.e.JSON(&d, "history", "show", ts[0].ID)
		return d.Recording && d.RecordingMS > 0
	}, func() string { return "daemon log:\n" + p.logs.String() })
	h.OK("phone_release", dev(), "")
	return filepath.Join(p.e.Home, "recordings", ts[0].ID+".mp4")
}

// recordingFrames is how many frames ffprobe decodes from a recording.
func recordingFrames(t *testing.T, path string) int {
	t.Helper()
	out, err := exec.Command(testdep.Need(t, "ffprobe"), "-v", "error", "-count_frames", "-select_streams", "v:0",
		"-show_entries", "stream=nb_read_frames", "-of", "default=nw=1:nk=1", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe refuses %s: %v\n%s", path, err, out)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return n
}

// TestAttackIOSVideoEavesdrop: someone on the Wi-Fi records the broadcast
// while an agent works on the phone. The recording of the air must hold
// none of the screen's video or stills in clear, while the driver, which
// holds the pairing secret, still gets every frame: the task's recording
// from the broadcast decodes.
func TestAttackIOSVideoEavesdrop(t *testing.T) {
	testdep.Need(t, "ffprobe")
	p := newIPhone(t)
	wifi := newWiFiRelay(t, p.videoAddr, nil)
	p.face(t, true, wifi.addr())
	recording := p.task(t, nil)

	if n := recordingFrames(t, recording); n < 2 {
		t.Errorf("the task's recording from the broadcast decodes to %d frames; want the broadcast's frames", n)
	}
	air := wifi.captured()
	if len(air) < 4<<10 {
		t.Fatalf("the eavesdropper recorded %d bytes; want the broadcast to have crossed", len(air))
	}
	if what := inClear(air); what != "" {
		t.Errorf("the eavesdropper's %d bytes hold %s: the phone's screen crosses the Wi-Fi in clear", len(air), what)
	}
}

// TestAttackIOSVideoOldClearBroadcast: a broadcast app of the old clear
// version (or anyone who learned the pairing secret of such an app) dials
// the driver, proves the secret the old way and sends its video in clear.
// The driver must refuse it at its HELLO, never answer the old AUTH, and
// tell the person to update the app.
func TestAttackIOSVideoOldClearBroadcast(t *testing.T) {
	p := newIPhone(t)
	secret, err := video.ParseSecret(p.secret)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", p.videoAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(nc)
	msg := func(typ byte, payload []byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(1+len(payload))), append([]byte{typ}, payload...)...)
	}
	// Version 1's HELLO: magic, versions 1 to 1, role source, a nonce, the id.
	hello := append([]byte("PNKV\x00\x01\x00\x01\x01"), bytes.Repeat([]byte{7}, 32)...)
	hello = append(append(hello, byte(len(p.id))), p.id...)
	nc.Write(msg(1, hello))

	var got []string
	var theirHello []byte
	for {
		var h [5]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			break
		}
		payload := make([]byte, binary.BigEndian.Uint32(h[:4])-1)
		if _, err := io.ReadFull(br, payload); err != nil {
			break
		}
		switch h[4] {
		case 1:
			got = append(got, "HELLO")
			theirHello = payload
			// The old app's AUTH (HMAC-SHA256 over both HELLOs), then its
			// video in clear, as version 1 sent it.
			mac := hmac.New(sha256.New, secret)
			mac.Write([]byte("pinky video auth\x01\x00\x01"))
			mac.Write(hello)
			mac.Write(theirHello)
			nc.Write(msg(2, mac.Sum(nil)))
			nc.Write(msg(3, []byte{1, 0, 2, 0xd0, 6, 0x18, 0, 0, 0, 1, 0x67, 0x42, 0xc0, 0x1f, 0, 0, 0, 1, 0x68, 0xce, 0x3c, 0x80}))
			nc.Write(msg(4, []byte{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0x65, 0x88, 0x84}))
		case 2:
			got = append(got, "AUTH")
		case 11:
			got = append(got, "ERROR "+strconv.Itoa(int(payload[0]))+": "+string(payload[1:]))
		default:
			got = append(got, "type "+strconv.Itoa(int(h[4])))
		}
	}
	if len(got) != 2 || got[0] != "HELLO" || !strings.HasPrefix(got[1], "ERROR 2: ") {
		t.Errorf("the driver answered the old clear broadcast with %q; want HELLO, then ERROR VERSION (2), and no AUTH", got)
	}
	if len(theirHello) >= 8 && binary.BigEndian.Uint16(theirHello[4:]) < 2 {
		t.Errorf("the driver offers version %d: the clear version 1 is not refused", binary.BigEndian.Uint16(theirHello[4:]))
	}
	p.e.EventuallyOr("the person is told to update the broadcast app", func() bool {
		return strings.Contains(p.logs.String(), "version 1 sends the screen unencrypted and is refused: update the broadcast app")
	}, p.logs.String)
}

// TestAttackIOSVideoDowngrade: the attacker in the middle rewrites the
// HELLOs of a real broadcast and of the driver, hoping that both fall back
// to the clear version 1 (or that the driver accepts a HELLO that was not
// sent). No video may cross in clear, and both ends must refuse.
func TestAttackIOSVideoDowngrade(t *testing.T) {
	tests := []struct {
		name    string
		rewrite func(toDriver bool, hello []byte) // the HELLO message, header included
		wantLog string
	}{
		{"both told the other speaks only version 1", func(_ bool, h []byte) {
			binary.BigEndian.PutUint16(h[9:], 1)  // min_version
			binary.BigEndian.PutUint16(h[11:], 1) // max_version
		}, "no common protocol version"},
		{"the phone made to offer version 1 too", func(toDriver bool, h []byte) {
			if toDriver {
				binary.BigEndian.PutUint16(h[9:], 1)
			}
		}, "authentication failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newIPhone(t)
			mitm := newWiFiRelay(t, p.videoAddr, func(toDriver bool, n int, unit []byte) []byte {
				if n == 0 && len(unit) >= 13 {
					unit = bytes.Clone(unit)
					tt.rewrite(toDriver, unit)
					return unit
				}
				return nil
			})
			p.face(t, true, mitm.addr())
			p.e.EventuallyOr("the driver refuses the altered handshake", func() bool {
				return strings.Contains(p.logs.String(), tt.wantLog) || inClear(mitm.captured()) != ""
			}, func() string { return "daemon log:\n" + p.logs.String() })
			time.Sleep(time.Second) // what would follow a handshake that passed
			if what := inClear(mitm.captured()); what != "" {
				t.Errorf("after the attacker's rewrite the Wi-Fi carries %s: the link was downgraded to clear", what)
			}
			if !strings.Contains(p.logs.String(), tt.wantLog) {
				t.Errorf("the daemon's log does not say %q", tt.wantLog)
			}
		})
	}
}

// TestAttackIOSVideoInjectFrame: the attacker in the middle waits until
// the broadcast is under way and slips a forged key frame of its own into
// the connection, at a boundary, so that the person's recording (and the
// mirror) would show a picture the phone never showed. The driver must
// refuse it and drop the connection; the phone's broadcast comes back and
// the recording holds no trace of the forgery.
func TestAttackIOSVideoInjectFrame(t *testing.T) {
	testdep.Need(t, "ffprobe")
	const marker = "FORGED-BY-THE-ATTACKER-ON-THE-WIFI"
	p := newIPhone(t)
	var armed, done sync.Once
	arm := make(chan struct{})
	forged := append([]byte{0, 0, 0, 0, 0, 0x0f, 0x42, 0x40, 1, 0, 0, 0, 1, 0x65, 0x88}, marker...)
	forgedMsg := append(binary.BigEndian.AppendUint32(nil, uint32(1+len(forged))), append([]byte{4}, forged...)...)
	mitm := newWiFiRelay(t, p.videoAddr, func(toDriver bool, n int, unit []byte) []byte {
		if !toDriver || n < 3 {
			return nil
		}
		select {
		case <-arm:
		default:
			return nil
		}
		var inject []byte
		done.Do(func() { inject = forgedMsg })
		if inject == nil {
			return nil
		}
		return append(bytes.Clone(unit), inject...) // after a whole unit of the phone's
	})
	p.face(t, true, mitm.addr())
	recording := p.task(t, func() {
		armed.Do(func() { close(arm) })
		p.e.EventuallyOr("the attacker's frame is sent", func() bool {
			return bytes.Contains(mitm.captured(), []byte(marker))
		}, func() string { return "daemon log:\n" + p.logs.String() })
	})

	data, err := os.ReadFile(recording)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(marker)) {
		t.Error("the person's recording holds the attacker's forged frame")
	}
	if !strings.Contains(p.logs.String(), "a record failed authentication") && !strings.Contains(p.logs.String(), "record of") {
		t.Errorf("the daemon's log does not say that the driver refused the forged bytes:\n%s", p.logs.String())
	}
	if n := recordingFrames(t, recording); n < 2 {
		t.Errorf("the recording decodes to %d frames; want the broadcast's own, before and after the attack", n)
	}
}
