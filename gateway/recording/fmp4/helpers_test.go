package fmp4

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/pinky-gateway/pinky/internal/testdep"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/h264"
)

// box is one parsed box: its type, payload and, for containers, children.
type box struct {
	typ  string
	off  int // offset of the box in the buffer it was read from
	data []byte
	kids []*box
}

// containers lists boxes holding boxes, and how many bytes come first.
var containers = map[string]int{
	"moov": 0, "trak": 0, "mdia": 0, "minf": 0, "dinf": 0, "stbl": 0, "mvex": 0,
	"moof": 0, "traf": 0, "stsd": 8, "dref": 8, "avc3": 78, "hev1": 78,
}

// readBoxes parses b into boxes; base is b's offset in the file.
func readBoxes(b []byte, base int) ([]*box, error) {
	var out []*box
	for i := 0; i < len(b); {
		if len(b)-i < 8 {
			return out, fmt.Errorf("box header at %d: %d bytes left", base+i, len(b)-i)
		}
		size := int(binary.BigEndian.Uint32(b[i:]))
		typ := string(b[i+4 : i+8])
		if size < 8 || i+size > len(b) {
			return out, fmt.Errorf("box %q at %d: size %d, %d bytes left", typ, base+i, size, len(b)-i)
		}
		bx := &box{typ: typ, off: base + i, data: b[i+8 : i+size]}
		if skip, ok := containers[typ]; ok {
			kids, err := readBoxes(bx.data[skip:], base+i+8+skip)
			if err != nil {
				return out, err
			}
			bx.kids = kids
		}
		out = append(out, bx)
		i += size
	}
	return out, nil
}

// find returns the first box along a path such as "moov/trak/tkhd".
func find(bs []*box, path string) *box {
	var cur *box
	for _, name := range strings.Split(path, "/") {
		cur = nil
		for _, b := range bs {
			if b.typ == name {
				cur = b
				break
			}
		}
		if cur == nil {
			return nil
		}
		bs = cur.kids
	}
	return cur
}

// tree renders box types nested, for comparing the layout.
func tree(bs []*box) string {
	var parts []string
	for _, b := range bs {
		s := b.typ
		if len(b.kids) > 0 {
			s += "(" + tree(b.kids) + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// fileSample is a sample as read back from the fragments of a file.
type fileSample struct {
	frag     int
	dts, dur uint64
	sync     bool
	data     []byte
}

// readSamples reads every sample of a fragmented file through its moof
// boxes, checking that trun's data offsets land in the mdat that follows.
func readSamples(t testing.TB, file []byte) []fileSample {
	t.Helper()
	top, err := readBoxes(file, 0)
	if err != nil {
		t.Fatalf("boxes: %v", err)
	}
	var out []fileSample
	for i, b := range top {
		if b.typ != "moof" {
			continue
		}
		if i+1 >= len(top) || top[i+1].typ != "mdat" {
			t.Fatalf("moof at %d is not followed by mdat", b.off)
		}
		mdat := top[i+1]
		tfdt, trun := find(b.kids, "traf/tfdt"), find(b.kids, "traf/trun")
		if tfdt == nil || trun == nil || find(b.kids, "mfhd") == nil || find(b.kids, "traf/tfhd") == nil {
			t.Fatalf("moof at %d: %s", b.off, tree(b.kids))
		}
		dts := binary.BigEndian.Uint64(tfdt.data[4:])
		if flags := binary.BigEndian.Uint32(trun.data) & 0xffffff; flags != 0x701 {
			t.Fatalf("trun flags %#x; want 0x701", flags)
		}
		n := int(binary.BigEndian.Uint32(trun.data[4:]))
		pos := b.off + int(binary.BigEndian.Uint32(trun.data[8:]))
		if pos != mdat.off+8 {
			t.Fatalf("trun data offset points at %d; mdat payload starts at %d", pos, mdat.off+8)
		}
		for k := range n {
			e := trun.data[12+12*k:]
			dur, size, flags := binary.BigEndian.Uint32(e), int(binary.BigEndian.Uint32(e[4:])), binary.BigEndian.Uint32(e[8:])
			if pos+size > mdat.off+8+len(mdat.data) {
				t.Fatalf("sample %d of moof at %d runs past its mdat", k, b.off)
			}
			out = append(out, fileSample{frag: int(binary.BigEndian.Uint32(find(b.kids, "mfhd").data[4:])), dts: dts, dur: uint64(dur),
				sync: flags == flagsSync, data: file[pos : pos+size]})
			pos += size
			dts += uint64(dur)
		}
		if pos != mdat.off+8+len(mdat.data) {
			t.Fatalf("moof at %d: samples end at %d; mdat ends at %d", b.off, pos, mdat.off+8+len(mdat.data))
		}
	}
	return out
}

// writeTemp writes b to a file in a test folder.
func writeTemp(t testing.TB, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// probeInfo is what ffprobe says of a file's video stream.
type probeInfo struct {
	codec         string
	width, height int
	frames        int
}

func probe(t testing.TB, path string) probeInfo {
	t.Helper()
	ffprobe := testdep.Need(t, "ffprobe")
	out, err := exec.Command(ffprobe, "-v", "error", "-count_frames", "-select_streams", "v:0",
		"-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe: %v: %s", err, out)
	}
	f := strings.Split(strings.TrimSpace(string(out)), ",")
	if len(f) != 4 {
		t.Fatalf("ffprobe: unexpected output %q", out)
	}
	var p probeInfo
	p.codec = f[0]
	p.width, _ = strconv.Atoi(f[1])
	p.height, _ = strconv.Atoi(f[2])
	p.frames, _ = strconv.Atoi(f[3])
	return p
}

// frameInfo is what ffprobe says of one decoded frame.
type frameInfo struct {
	width, height int
	key           bool
	pts           float64 // seconds
}

// probeFrames decodes the file and lists its frames.
func probeFrames(t testing.TB, path string) []frameInfo {
	t.Helper()
	ffprobe := testdep.Need(t, "ffprobe")
	cmd := exec.Command(ffprobe, "-v", "error", "-select_streams", "v:0", "-show_frames",
		"-show_entries", "frame=width,height,key_frame,best_effort_timestamp_time", "-of", "csv=p=0", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("ffprobe frames: %v: %s", err, stderr.Bytes())
	}
	var frames []frameInfo
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 4 {
			t.Fatalf("ffprobe frames: unexpected line %q", line)
		}
		var fi frameInfo
		fi.key = f[0] == "1"
		fi.pts, _ = strconv.ParseFloat(f[1], 64)
		fi.width, _ = strconv.Atoi(f[2])
		fi.height, _ = strconv.Atoi(f[3])
		frames = append(frames, fi)
	}
	return frames
}

// decode decodes the file with ffmpeg into RGB frames of w x h (frames of
// another size are scaled by ffmpeg: pass the size of the frames to check).
func decode(t testing.TB, path string, extra ...string) []byte {
	t.Helper()
	ffmpeg := testdep.Need(t, "ffmpeg")
	out := filepath.Join(t.TempDir(), "out.rgb")
	args := append([]string{"-v", "error", "-xerror", "-i", path, "-fps_mode", "passthrough"}, extra...)
	args = append(args, "-f", "rawvideo", "-pix_fmt", "rgb24", out)
	if msg, err := exec.Command(ffmpeg, args...).CombinedOutput(); err != nil || len(bytes.TrimSpace(msg)) > 0 {
		t.Fatalf("ffmpeg decode: %v: %s", err, msg)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// meanDiff is the mean absolute difference of the channels between img and
// an RGB frame. 4:2:0 chroma blurs sharp colour edges, so a right frame is
// close on average, not at every pixel.
func meanDiff(img *image.RGBA, rgb []byte) float64 {
	b := img.Bounds()
	sum := 0
	for y := range b.Dy() {
		for x := range b.Dx() {
			o := img.PixOffset(b.Min.X+x, b.Min.Y+y)
			for c := range 3 {
				d := int(img.Pix[o+c]) - int(rgb[(y*b.Dx()+x)*3+c])
				sum += max(d, -d)
			}
		}
	}
	return float64(sum) / float64(3*b.Dx()*b.Dy())
}

// pattern draws a frame that differs from its neighbours: a gradient with a
// box that moves with i.
func pattern(w, h, i int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), uint8(i * 40), 255})
		}
	}
	bx, by := (i*7)%max(w-8, 1), (i*5)%max(h-8, 1)
	for y := by; y < by+8 && y < h; y++ {
		for x := bx; x < bx+8 && x < w; x++ {
			img.SetRGBA(x, y, color.RGBA{255, 255, 255, 255})
		}
	}
	return img
}

// encoded is a scripted H.264 stream: its packets and the images they show.
type encoded struct {
	packets []sdk.VideoPacket
	images  []*image.RGBA // one per frame packet
}

// encode encodes imgs with the sim encoder, one frame every 40 ms from pts0;
// keys lists the frames to make key frames (the first always is). A config
// packet comes before the first frame.
func encode(t testing.TB, imgs []*image.RGBA, keys map[int]bool, pts0 time.Duration) encoded {
	t.Helper()
	b := imgs[0].Bounds()
	enc, err := h264.NewEncoder(b.Dx(), b.Dy())
	if err != nil {
		t.Fatal(err)
	}
	var e encoded
	e.packets = append(e.packets, sdk.VideoPacket{Codec: sdk.CodecH264, Config: true, PTS: pts0, Width: b.Dx(), Height: b.Dy(), Data: enc.Config()})
	for i, img := range imgs {
		f, err := enc.Encode(img, keys[i])
		if err != nil {
			t.Fatal(err)
		}
		if f.Data == nil {
			t.Fatalf("frame %d: the encoder sent nothing (same picture as before)", i)
		}
		e.packets = append(e.packets, sdk.VideoPacket{Codec: sdk.CodecH264, KeyFrame: f.Key, PTS: pts0 + time.Duration(i)*40*time.Millisecond,
			Width: b.Dx(), Height: b.Dy(), Data: f.Data})
		e.images = append(e.images, img)
	}
	return e
}
