package adbd_test

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
)

// binaryManifest lays out a binary AndroidManifest.xml as aapt2 writes it
// (ResourceTypes.h): the XML chunk, a UTF-8 string pool, and a <manifest>
// start element whose package attribute is a string.
func binaryManifest(pkg string) []byte {
	le := binary.LittleEndian
	strs := []string{"manifest", "package", pkg, "versionCode"}
	var data bytes.Buffer
	var offs []uint32
	for _, s := range strs {
		offs = append(offs, uint32(data.Len()))
		data.WriteByte(byte(len(s))) // UTF-16 length (ASCII: the same)
		data.WriteByte(byte(len(s)))
		data.WriteString(s)
		data.WriteByte(0)
	}
	for data.Len()%4 != 0 {
		data.WriteByte(0)
	}
	pool := make([]byte, 28+4*len(strs))
	le.PutUint16(pool[0:], 0x0001)
	le.PutUint16(pool[2:], 28)
	le.PutUint32(pool[8:], uint32(len(strs)))
	le.PutUint32(pool[16:], 1<<8) // UTF-8
	le.PutUint32(pool[20:], uint32(len(pool)))
	for i, o := range offs {
		le.PutUint32(pool[28+4*i:], o)
	}
	pool = append(pool, data.Bytes()...)
	le.PutUint32(pool[4:], uint32(len(pool)))

	elem := make([]byte, 36+20)
	le.PutUint16(elem[0:], 0x0102)
	le.PutUint16(elem[2:], 16)
	le.PutUint32(elem[4:], uint32(len(elem)))
	le.PutUint32(elem[8:], 1)           // line
	le.PutUint32(elem[12:], 0xffffffff) // comment
	le.PutUint32(elem[16:], 0xffffffff) // namespace
	le.PutUint32(elem[20:], 0)          // "manifest"
	le.PutUint16(elem[24:], 20)         // attributeStart
	le.PutUint16(elem[26:], 20)         // attributeSize
	le.PutUint16(elem[28:], 1)          // attributeCount
	a := elem[36:]
	le.PutUint32(a[0:], 0xffffffff) // namespace
	le.PutUint32(a[4:], 1)          // "package"
	le.PutUint32(a[8:], 2)          // raw value: the package
	le.PutUint16(a[12:], 8)
	a[15] = 0x03 // a string
	le.PutUint32(a[16:], 2)

	out := make([]byte, 8)
	le.PutUint16(out[0:], 0x0003)
	le.PutUint16(out[2:], 8)
	out = append(append(out, pool...), elem...)
	le.PutUint32(out[4:], uint32(len(out)))
	return out
}

func writeAPK(t *testing.T, name string, files map[string][]byte) string {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for n, data := range files {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestInstall: adb install (Debian's adb streams it to cmd package install
// -S) and pm install of a pushed file read the package from the APK's
// binary manifest; the package is then listed, and pm uninstall removes it.
// What is not an APK fails as the package manager fails it.
func TestInstall(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	apk := writeAPK(t, "hello.apk", map[string][]byte{"AndroidManifest.xml": binaryManifest("com.example.hello"), "classes.dex": []byte("dex\n035\x00")})
	out, errs, code := adb(t, nil, "-s", p.serial, "install", apk)
	if code != 0 || !strings.Contains(out, "Success") {
		t.Fatalf("adb install: exit %d, %q %q; want Success", code, out, errs)
	}
	if got := p.run(t, "shell", "pm list packages -3"); !strings.Contains(got, "package:com.example.hello\n") {
		t.Errorf("pm list packages -3 after the install: %q; want com.example.hello", got)
	}
	if got := p.run(t, "shell", "pm path com.example.hello"); !strings.HasPrefix(got, "package:/data/app/") {
		t.Errorf("pm path of the installed package: %q", got)
	}
	p.run(t, "push", apk, "/data/local/tmp/hello.apk")
	if got := p.run(t, "shell", "pm install -r -t /data/local/tmp/hello.apk"); got != "Success\n" {
		t.Errorf("pm install of a pushed APK: %q; want Success", got)
	}
	if got := p.run(t, "shell", "pm uninstall com.example.hello"); got != "Success\n" {
		t.Errorf("pm uninstall: %q; want Success", got)
	}
	if got := p.run(t, "shell", "pm list packages"); strings.Contains(got, "com.example.hello") {
		t.Errorf("pm list packages after the uninstall still lists it: %q", got)
	}
	for _, tt := range []struct {
		name string
		path string
		want string
	}{
		{"not a zip", filepath.Join(t.TempDir(), "junk.apk"), "INSTALL_PARSE_FAILED_NOT_APK"},
		{"no manifest", writeAPK(t, "empty.apk", map[string][]byte{"classes.dex": []byte("x")}), "AndroidManifest.xml missing"},
		{"a system app's package", writeAPK(t, "settings.apk", map[string][]byte{"AndroidManifest.xml": binaryManifest("com.android.settings")}), "INSTALL_FAILED_UPDATE_INCOMPATIBLE"},
	} {
		if tt.name == "not a zip" {
			os.WriteFile(tt.path, []byte("not an apk"), 0o644)
		}
		out, errs, code := adb(t, nil, "-s", p.serial, "install", tt.path)
		if code == 0 || !strings.Contains(out+errs, "Failure [") || !strings.Contains(out+errs, tt.want) {
			t.Errorf("adb install of %s: exit %d, %q %q; want a Failure with %s", tt.name, code, out, errs, tt.want)
		}
	}
	if out, _, code := adb(t, nil, "-s", p.serial, "shell", "pm uninstall com.example.none"); code == 0 || !strings.Contains(out, "Failure [DELETE_FAILED_INTERNAL_ERROR]") {
		t.Errorf("pm uninstall of a package it lacks: exit %d, %q", code, out)
	}
}
