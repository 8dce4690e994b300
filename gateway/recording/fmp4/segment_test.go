package fmp4

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"github.com/pinky-gateway/pinky/internal/testdep"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/h264"
)

func unhex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// Real parameter sets, from libx264 (High profile) and libx265 (Main) for
// a 200x120 picture (both crop: 208x128 and 200x128 coded).
var (
	x264SPS = unhex("6764000bacb20688f2cb80880000030008000003019078a15240")
	x264PPS = unhex("68ebc3cb22c0")
	x265VPS = unhex("40010c01ffff01600000030090000003000003003c928090")
	x265SPS = unhex("42010101600000030090000003000003003ca01920796592a4932bc05a020000030002000003003210")
	x265PPS = unhex("4401c172b46240")
)

func annexB(units ...[]byte) []byte {
	var b []byte
	for _, u := range units {
		b = append(b, 0, 0, 0, 1)
		b = append(b, u...)
	}
	return b
}

func TestNALUnits(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want [][]byte
	}{
		{"empty", nil, nil},
		{"no start code", []byte{1, 2, 3}, nil},
		{"four-byte start codes", []byte{0, 0, 0, 1, 0x67, 1, 0, 0, 0, 1, 0x68, 2}, [][]byte{{0x67, 1}, {0x68, 2}}},
		{"three-byte start codes", []byte{0, 0, 1, 0x65, 9, 9, 0, 0, 1, 0x41}, [][]byte{{0x65, 9, 9}, {0x41}}},
		{"trailing zeros dropped", []byte{0, 0, 1, 0x65, 7, 0, 0, 0, 0, 0, 1, 0x41, 0}, [][]byte{{0x65, 7}, {0x41}}},
		{"escaped zeros kept", []byte{0, 0, 1, 0x65, 0, 0, 3, 1, 5}, [][]byte{{0x65, 0, 0, 3, 1, 5}}},
		{"leading garbage", []byte{9, 9, 0, 0, 1, 0x09, 0xf0}, [][]byte{{0x09, 0xf0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NALUnits(tt.in); !cmp.Equal(got, tt.want) {
				t.Errorf("got %x; want %x", got, tt.want)
			}
		})
	}
}

func TestAppendSample(t *testing.T) {
	got := AppendSample([]byte{0xaa}, []byte{0, 0, 0, 1, 0x65, 1, 2, 0, 0, 1, 0x41, 3}, [][]byte{{0x67, 4}, {0x68}})
	want := []byte{0xaa, 0, 0, 0, 2, 0x67, 4, 0, 0, 0, 1, 0x68, 0, 0, 0, 3, 0x65, 1, 2, 0, 0, 0, 2, 0x41, 3}
	if !bytes.Equal(got, want) {
		t.Errorf("got %x; want %x", got, want)
	}
}

func TestParseConfig(t *testing.T) {
	simEnc := func(w, h int) []byte {
		e, err := h264.NewEncoder(w, h)
		if err != nil {
			t.Fatal(err)
		}
		return e.Config()
	}
	tests := []struct {
		name   string
		codec  sdk.Codec
		in     []byte
		w, h   int
		params int
		ptl    string
		err    bool
	}{
		{"sim baseline", sdk.CodecH264, simEnc(64, 48), 64, 48, 2, "42c00a", false},
		{"sim cropped", sdk.CodecH264, simEnc(1080, 2400), 1080, 2400, 2, "42c032", false},
		{"x264 high cropped", sdk.CodecH264, annexB(x264SPS, x264PPS), 200, 120, 2, "64000b", false},
		{"x265 main cropped", sdk.CodecH265, annexB(x265VPS, x265SPS, x265PPS), 200, 120, 3, "01600000009000000000003c", false},
		{"aud and sei left out", sdk.CodecH264, annexB([]byte{0x09, 0xf0}, x264SPS, []byte{0x06, 5, 1, 0x80}, x264PPS), 200, 120, 2, "64000b", false},
		{"no pps", sdk.CodecH264, annexB(x264SPS), 0, 0, 0, "", true},
		{"no vps", sdk.CodecH265, annexB(x265SPS, x265PPS), 0, 0, 0, "", true},
		{"no sps", sdk.CodecH264, annexB(x264PPS), 0, 0, 0, "", true},
		{"truncated sps", sdk.CodecH264, annexB(x264SPS[:6], x264PPS), 0, 0, 0, "", true},
		{"h265 sets as h264", sdk.CodecH264, annexB(x265VPS, x265SPS, x265PPS), 0, 0, 0, "", true},
		{"unknown codec", "vp9", annexB(x264SPS, x264PPS), 0, 0, 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := ParseConfig(tt.codec, tt.in)
			if (err != nil) != tt.err {
				t.Fatalf("err %v; want error %v", err, tt.err)
			}
			if tt.err {
				return
			}
			if tr.Width != tt.w || tr.Height != tt.h || len(tr.ParamSets) != tt.params || hex.EncodeToString(tr.sps.PTL) != tt.ptl {
				t.Errorf("got %dx%d, %d sets, ptl %x; want %dx%d, %d, %s", tr.Width, tr.Height, len(tr.ParamSets), tr.sps.PTL, tt.w, tt.h, tt.params, tt.ptl)
			}
		})
	}
}

func TestInitSegmentBoxes(t *testing.T) {
	tests := []struct {
		name   string
		codec  sdk.Codec
		config []byte
		entry  string
		record string // the decoder configuration record, hex
	}{
		{"h264 high", sdk.CodecH264, annexB(x264SPS, x264PPS), "avc3",
			"0164000bffe1" + "001a" + hex.EncodeToString(x264SPS) + "01" + "0006" + hex.EncodeToString(x264PPS) + "fdf8f800"},
		{"h265 main", sdk.CodecH265, annexB(x265VPS, x265SPS, x265PPS), "hev1",
			"01" + "01600000009000000000003c" + "f000" + "fc" + "fd" + "f8" + "f8" + "0000" + "0f" + "03" +
				"20" + "0001" + "0018" + hex.EncodeToString(x265VPS) +
				"21" + "0001" + "0029" + hex.EncodeToString(x265SPS) +
				"22" + "0001" + "0007" + hex.EncodeToString(x265PPS)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := ParseConfig(tt.codec, tt.config)
			if err != nil {
				t.Fatal(err)
			}
			seg, err := InitSegment(tr)
			if err != nil {
				t.Fatal(err)
			}
			top, err := readBoxes(seg, 0)
			if err != nil {
				t.Fatal(err)
			}
			wantTree := "ftyp moov(mvhd trak(tkhd mdia(mdhd hdlr minf(vmhd dinf(dref(url )) stbl(stsd(" + tt.entry +
				"(" + map[string]string{"avc3": "avcC", "hev1": "hvcC"}[tt.entry] + ")) stts stsc stco stsz)))) mvex(trex))"
			if got := tree(top); got != wantTree {
				t.Fatalf("boxes %s; want %s", got, wantTree)
			}
			tkhd := find(top, "moov/trak/tkhd").data
			if w, h := binary.BigEndian.Uint32(tkhd[76:])>>16, binary.BigEndian.Uint32(tkhd[80:])>>16; w != 200 || h != 120 {
				t.Errorf("tkhd size %dx%d; want 200x120", w, h)
			}
			if ts := binary.BigEndian.Uint32(find(top, "moov/trak/mdia/mdhd").data[12:]); ts != DefaultTimescale {
				t.Errorf("mdhd timescale %d; want %d", ts, DefaultTimescale)
			}
			entry := find(top, "moov/trak/mdia/minf/stbl/stsd/"+tt.entry)
			if w, h := binary.BigEndian.Uint16(entry.data[24:]), binary.BigEndian.Uint16(entry.data[26:]); w != 200 || h != 120 {
				t.Errorf("sample entry size %dx%d; want 200x120", w, h)
			}
			if got := hex.EncodeToString(entry.kids[0].data); got != tt.record {
				t.Errorf("decoder configuration record\n got %s\nwant %s", got, tt.record)
			}
			trex := find(top, "moov/mvex/trex").data
			if id, desc := binary.BigEndian.Uint32(trex[4:]), binary.BigEndian.Uint32(trex[8:]); id != TrackID || desc != 1 {
				t.Errorf("trex track %d, description %d; want %d, 1", id, desc, TrackID)
			}
		})
	}
}

func TestFragmentBoxes(t *testing.T) {
	samples := []Sample{
		{Data: []byte{0, 0, 0, 2, 0x65, 1}, Duration: 3000, Sync: true},
		{Data: []byte{0, 0, 0, 1, 0x41}, Duration: 4500},
		{Data: []byte{0, 0, 0, 3, 0x41, 2, 3}, Duration: 1},
	}
	init, err := InitSegment(mustTrack(t, sdk.CodecH264, annexB(x264SPS, x264PPS)))
	if err != nil {
		t.Fatal(err)
	}
	file := slices.Concat(init, Fragment(7, 123456789012, samples))
	top, err := readBoxes(file, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tree(top[2:]), "moof(mfhd traf(tfhd tfdt trun)) mdat"; got != want {
		t.Fatalf("boxes %s; want %s", got, want)
	}
	if seq := binary.BigEndian.Uint32(find(top[2:], "moof/mfhd").data[4:]); seq != 7 {
		t.Errorf("mfhd sequence %d; want 7", seq)
	}
	if tfhd := find(top[2:], "moof/traf/tfhd").data; binary.BigEndian.Uint32(tfhd) != 0x020000 || binary.BigEndian.Uint32(tfhd[4:]) != TrackID {
		t.Errorf("tfhd %x; want default-base-is-moof, track %d", tfhd, TrackID)
	}
	got := readSamples(t, file)
	want := []fileSample{
		{frag: 7, dts: 123456789012, dur: 3000, sync: true, data: samples[0].Data},
		{frag: 7, dts: 123456789012 + 3000, dur: 4500, data: samples[1].Data},
		{frag: 7, dts: 123456789012 + 7500, dur: 1, data: samples[2].Data},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(fileSample{})); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
}

func mustTrack(t testing.TB, c sdk.Codec, config []byte) Track {
	t.Helper()
	tr, err := ParseConfig(c, config)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// needX265 encodes ffmpeg's test pattern with libx265 into an Annex B
// stream without B frames, a key frame every 4 frames.
func needX265(t *testing.T, w, h, n int) []byte {
	t.Helper()
	ffmpeg := testdep.Need(t, "ffmpeg")
	out := filepath.Join(t.TempDir(), "x.hevc")
	cmd := exec.Command(ffmpeg, "-v", "error", "-f", "lavfi", "-i", "testsrc=rate=25:size="+strconv.Itoa(w)+"x"+strconv.Itoa(h),
		"-frames:v", strconv.Itoa(n), "-pix_fmt", "yuv420p", "-c:v", "libx265",
		"-x265-params", "bframes=0:keyint=4:min-keyint=4:scenecut=0:repeat-headers=1:info=0:log-level=error", "-f", "hevc", "-y", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		if os.Getenv("CI") != "true" && strings.Contains(string(msg), "Unknown encoder") {
			t.Skipf("ffmpeg has no libx265: %s", msg)
		}
		t.Fatalf("libx265: %v: %s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hevcPackets splits an H.265 Annex B stream into packets as a driver sends
// them: the parameter sets as a config packet before the access unit they
// came with, then one packet per access unit, a frame every 40 ms from pts0.
func hevcPackets(stream []byte, w, h int, pts0 time.Duration) []sdk.VideoPacket {
	var out []sdk.VideoPacket
	var config, au []byte
	key, frames := false, 0
	emit := func() {
		pts := pts0 + time.Duration(frames)*40*time.Millisecond
		if config != nil {
			out = append(out, sdk.VideoPacket{Codec: sdk.CodecH265, Config: true, Width: w, Height: h, PTS: pts, Data: config})
		}
		out = append(out, sdk.VideoPacket{Codec: sdk.CodecH265, KeyFrame: key, Width: w, Height: h, PTS: pts, Data: au})
		config, au, key = nil, nil, false
		frames++
	}
	for _, u := range NALUnits(stream) {
		typ := u[0] >> 1 & 0x3f
		// A parameter set, an AUD, a prefix SEI or a picture's first slice
		// begins a new access unit.
		begins := typ >= 32 && typ <= 35 || typ == 39 || typ < 32 && u[2]&0x80 != 0
		if begins && hasVCL(au) {
			emit()
		}
		switch {
		case typ >= 32 && typ <= 34:
			config = append(config, annexB(u)...)
		default:
			key = key || typ >= 16 && typ <= 21
			au = append(au, annexB(u)...)
		}
	}
	if hasVCL(au) {
		emit()
	}
	return out
}

func hasVCL(au []byte) bool {
	for _, u := range NALUnits(au) {
		if u[0]>>1&0x3f < 32 {
			return true
		}
	}
	return false
}

func TestH265(t *testing.T) {
	a := needX265(t, 200, 120, 9)
	b := needX265(t, 120, 200, 6)
	packets := slices.Concat(hevcPackets(a, 200, 120, 0), hevcPackets(b, 120, 200, 9*40*time.Millisecond))
	keys := 0
	for _, p := range packets {
		if p.KeyFrame {
			keys++
		}
	}
	if len(packets) != 15+5 || keys != 3+2 || !packets[0].Config || !packets[1].KeyFrame {
		t.Fatalf("split the x265 stream into %d packets with %d key frames; want 20 (x265 repeats the parameter sets at each key frame) with 5, config then key first", len(packets), keys)
	}
	file, st := writeAll(t, packets, 15*40*time.Millisecond)
	if st.Codec != sdk.CodecH265 || st.Samples != 15 {
		t.Errorf("stats %+v; want h265, 15 samples", st)
	}
	path := writeTemp(t, "h265.mp4", file)
	if p, want := probe(t, path), (probeInfo{"hevc", 200, 120, 15}); p != want {
		t.Errorf("ffprobe %+v; want %+v", p, want)
	}
	for i, f := range probeFrames(t, path) {
		w, h := 200, 120
		if i >= 9 {
			w, h = 120, 200
		}
		if f.width != w || f.height != h || f.key != (i%4 == 0 && i < 9 || i == 9 || i == 13) {
			t.Errorf("frame %d: %dx%d key %v; want %dx%d", i, f.width, f.height, f.key, w, h)
		}
	}
	// Remuxing changes no picture: the file decodes to what the elementary
	// streams decode to.
	wantA, wantB := rawES(t, a), rawES(t, b)
	gotA := decode(t, path, "-frames:v", "9")
	if !bytes.Equal(gotA, wantA) {
		t.Errorf("the first 9 frames differ from the elementary stream's (%d and %d bytes)", len(gotA), len(wantA))
	}
	gotB := decode(t, path, "-vf", "scale=120:200")
	if len(gotB) != 15*120*200*3 || !bytes.Equal(gotB[9*120*200*3:], wantB) {
		t.Errorf("the frames after the size change differ from the elementary stream's")
	}
}

// rawES decodes an H.265 elementary stream to RGB frames.
func rawES(t *testing.T, stream []byte) []byte {
	t.Helper()
	return decode(t, writeTemp(t, "es.hevc", stream))
}
