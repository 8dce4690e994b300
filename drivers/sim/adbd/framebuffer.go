package adbd

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"io"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// The raw pixels screencap prints without -p, and the framebuffer:
// service, as AOSP's screencap.cpp and adbd's framebuffer_service.cpp
// write them: RGBA_8888 after a header.
const (
	pixelFormatRGBA8888 = 1 // android::PIXEL_FORMAT_RGBA_8888
	colorSpaceSRGB      = 1 // screencap's COLORSPACE_SRGB
	// colorSpaceLevel is the first API level (Android 9) whose screencap
	// writes a colour space after the format and whose framebuffer:
	// header is version 2 (with colorSpace). An assumption from AOSP's
	// history as remembered, not checked against a phone of each release.
	colorSpaceLevel = 28
)

// rawScreen is the phone's screen as RGBA pixels, row after row.
func (d *Device) rawScreen(ctx context.Context) (*image.RGBA, error) {
	shot, err := d.cfg.Driver.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: d.id, Format: sdk.FormatPNG})
	if err != nil {
		return nil, err
	}
	img, err := png.Decode(bytes.NewReader(shot.Data))
	if err != nil {
		return nil, fmt.Errorf("the screenshot is no PNG: %w", err)
	}
	if rgba, ok := img.(*image.RGBA); ok && rgba.Rect.Min == (image.Point{}) && rgba.Stride == 4*rgba.Rect.Dx() {
		return rgba, nil
	}
	rgba := image.NewRGBA(image.Rect(0, 0, img.Bounds().Dx(), img.Bounds().Dy()))
	draw.Draw(rgba, rgba.Rect, img, img.Bounds().Min, draw.Src)
	return rgba, nil
}

// writeRawScreencap writes screencap's raw output: width, height, format
// and (from Android 9) colour space as little-endian 32-bit words, then
// the pixels.
func (d *Device) writeRawScreencap(w io.Writer, img *image.RGBA) error {
	hdr := []uint32{uint32(img.Rect.Dx()), uint32(img.Rect.Dy()), pixelFormatRGBA8888}
	if d.sdkLevel() >= colorSpaceLevel {
		hdr = append(hdr, colorSpaceSRGB)
	}
	if err := binary.Write(w, binary.LittleEndian, hdr); err != nil {
		return err
	}
	_, err := w.Write(img.Pix)
	return err
}

// serveFramebuffer is the framebuffer: service: a header of version, bits
// per pixel, (version 2: colour space,) size, width, height and the
// offset and length of red, blue, green and alpha, then the pixels.
func (d *Device) serveFramebuffer(ctx context.Context, s *stream) error {
	// adbd runs screencap for it, and takes its time.
	if err := cost(d.cfg.Timing, "screencap").Wait(ctx); err != nil {
		return err
	}
	img, err := d.rawScreen(ctx)
	if err != nil {
		// adbd closes the stream when screencap fails.
		return err
	}
	width, height := uint32(img.Rect.Dx()), uint32(img.Rect.Dy())
	hdr := []uint32{1, 32}
	if d.sdkLevel() >= colorSpaceLevel {
		hdr = []uint32{2, 32, colorSpaceSRGB}
	}
	hdr = append(hdr, uint32(len(img.Pix)), width, height, 0, 8, 16, 8, 8, 8, 24, 8)
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, hdr) //nolint:errcheck // a bytes.Buffer does not fail
	if _, err := s.Write(b.Bytes()); err != nil {
		return err
	}
	_, err = s.Write(img.Pix)
	return err
}
