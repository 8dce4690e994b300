package scrcpyd

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestVideoSize checks the video size of each version against values worked
// out by hand from the real server's Java:
//   - 3.x: server/src/main/java/com/genymobile/scrcpy/device/Size.java
//     (limit, then round8: the major side down, the minor to the nearest 8),
//     with max_size rounded down to 8 by Options.java;
//   - 4.0: server/src/main/java/com/genymobile/scrcpy/model/Size.java
//     constrain() with the encoder's capabilities (SurfaceEncoder.java
//     createVideoConstraints): the max size aligned first;
//   - 4.1: the same file's constrain() without capabilities (SurfaceEncoder
//     applies them only after a failure): scaled, then each side aligned
//     down, the alignment max(2, min_size_alignment) or 1 when
//     ignore_video_encoder_constraints.
func TestVideoSize(t *testing.T) {
	tests := []struct {
		version string
		args    []string
		w, h    int // the display
		vw, vh  int // the video
	}{
		{"3.3.4", []string{"max_size=1024"}, 1080, 2400, 464, 1024}, // 460.8 → 460, to the nearest 8: 464
		{"3.3.4", []string{"max_size=1920"}, 1080, 2400, 864, 1920},
		{"3.3.4", nil, 1080, 2400, 1080, 2400}, // already multiples of 8
		{"3.3.4", []string{"max_size=1024"}, 1179, 2556, 472, 1024},
		{"3.3.4", []string{"max_size=1920"}, 1179, 2556, 888, 1920}, // 885 to the nearest 8
		{"3.3.4", nil, 1179, 2556, 1176, 2552},                      // 2556 down to 2552, 1179 to the nearest 1176
		{"3.3.4", []string{"max_size=1920"}, 2556, 1179, 1920, 888}, // rotated
		{"3.3.4", []string{"max_size=1023"}, 1080, 2400, 456, 1016}, // max_size 1016: 457 → 456
		{"3.3.4", []string{"max_size=7"}, 1080, 2400, 1080, 2400},   // max_size 0: no limit
		{"3.0", []string{"max_size=1024"}, 1001, 1001, 1000, 1000},  // not over: kept; round8 takes 1001 down and 1005 down to 1000
		{"4.0", []string{"max_size=1024"}, 1080, 2400, 460, 1024},
		{"4.0", []string{"max_size=1920"}, 1179, 2556, 884, 1920}, // 885 aligned down to 2
		{"4.0", nil, 1179, 2556, 1178, 2556},
		{"4.0", []string{"max_size=1023"}, 1080, 2400, 458, 1022}, // 1022 first: 459 → 458
		{"4.0", []string{"max_size=1023"}, 2400, 1080, 1022, 458}, // rotated
		{"4.1", []string{"max_size=1024"}, 1080, 2400, 460, 1024},
		{"4.1", []string{"max_size=1920"}, 1080, 2400, 864, 1920},
		{"4.1", nil, 1080, 2400, 1080, 2400},
		{"4.1", []string{"max_size=1024"}, 1179, 2556, 472, 1024},
		{"4.1", []string{"max_size=1920"}, 1179, 2556, 884, 1920},
		{"4.1", nil, 1179, 2556, 1178, 2556},
		{"4.1", []string{"max_size=1920"}, 2556, 1179, 1920, 884}, // rotated
		{"4.1", []string{"max_size=1023"}, 1080, 2400, 460, 1022}, // 460.35 → 460; 1023 → 1022
		{"4.1", []string{"min_size_alignment=16"}, 1179, 2556, 1168, 2544},
		{"4.1", []string{"max_size=500"}, 1001, 1001, 500, 500}, // a square: the height is the major
		{"4.1", []string{"ignore_video_encoder_constraints=true"}, 1179, 2556, 1179, 2556},
		{"4.0", []string{"ignore_video_encoder_constraints=true"}, 1179, 2556, 1178, 2556}, // 4.0 knows no such option
	}
	for _, tt := range tests {
		t.Run(tt.version+" "+sizeName(tt.w, tt.h)+" "+join(tt.args), func(t *testing.T) {
			o, err := parseArgs(tt.version, append([]string{tt.version}, tt.args...), &logger{stdout: io.Discard, stderr: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			if vw, vh := newSizer(o).video(tt.w, tt.h); vw != tt.vw || vh != tt.vh {
				t.Errorf("video(%dx%d) = %dx%d; want %dx%d", tt.w, tt.h, vw, vh, tt.vw, tt.vh)
			}
		})
	}
}

// TestDisplaySize checks the size new_display makes a display of:
// NewDisplayCapture.java keeps it in 3.x and aligns it in 4.x.
func TestDisplaySize(t *testing.T) {
	tests := []struct {
		version string
		args    []string
		w, h    int
		dw, dh  int
	}{
		{"3.3.4", nil, 1179, 2556, 1179, 2556},
		{"4.0", nil, 1179, 2556, 1178, 2556},
		{"4.1", nil, 1179, 2556, 1178, 2556},
		{"4.1", []string{"min_size_alignment=16"}, 1179, 2556, 1168, 2544},
		{"4.1", []string{"max_size=1024"}, 1080, 2400, 1080, 2400}, // max_size sizes the video, not the display
	}
	for _, tt := range tests {
		t.Run(tt.version+" "+sizeName(tt.w, tt.h)+" "+join(tt.args), func(t *testing.T) {
			o, err := parseArgs(tt.version, append([]string{tt.version}, tt.args...), &logger{stdout: io.Discard, stderr: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			if dw, dh := newSizer(o).display(tt.w, tt.h); dw != tt.dw || dh != tt.dh {
				t.Errorf("display(%dx%d) = %dx%d; want %dx%d", tt.w, tt.h, dw, dh, tt.dw, tt.dh)
			}
		})
	}
}

// TestSizeOptions checks how the versions parse the size options.
func TestSizeOptions(t *testing.T) {
	tests := []struct {
		version, arg string
		maxSize      int
		align        int
		bad          bool
	}{
		{"3.3.4", "max_size=1023", 1016, 0, false}, // "& ~7; // multiple of 8"
		{"4.1", "max_size=1023", 1023, 2, false},
		{"4.1", "min_size_alignment=8", 0, 8, false},
		{"4.1", "min_size_alignment=1", 0, 2, false}, // the codec's 2 is larger
		{"4.1", "min_size_alignment=3", 0, 0, true},
		{"4.1", "min_size_alignment=32", 0, 0, true},
		{"3.3.4", "min_size_alignment=3", 0, 0, false}, // unknown to 3.x: a warning
	}
	for _, tt := range tests {
		t.Run(tt.version+" "+tt.arg, func(t *testing.T) {
			o, err := parseArgs(tt.version, []string{tt.version, tt.arg}, &logger{stdout: io.Discard, stderr: io.Discard})
			if tt.bad {
				if err == nil {
					t.Fatalf("parseArgs(%s) = nil error; want one", tt.arg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			z := newSizer(o)
			if z.maxSize != tt.maxSize || z.alignment != tt.align {
				t.Errorf("max size %d, alignment %d; want %d, %d", z.maxSize, z.alignment, tt.maxSize, tt.align)
			}
		})
	}
}

func sizeName(w, h int) string { return fmt.Sprintf("%dx%d", w, h) }

func join(args []string) string { return strings.Join(args, ",") }
