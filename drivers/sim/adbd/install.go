package adbd

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
)

// An APK the phone installs (pm install, adb install): its package name is
// read from the binary AndroidManifest.xml, and the package joins `pm list
// packages -3` until `pm uninstall`. It is not launched: the sim has no
// screens for it.

// maxAPK bounds what an install reads.
const maxAPK = 256 << 20

// installFile is pm install PATH.
func (sh *shell) installFile(p string, io3 stdio) int {
	r, err := sh.d.fs.open(sh.ctx, sh.abs(p))
	if err != nil {
		fmt.Fprintf(io3.err, "Error: Unable to open file: %s\nConsider using a file under /data/local/tmp/\n", p)
		fmt.Fprintln(io3.out, "Error: Can't open file: "+p)
		return 1
	}
	defer r.Close()
	return sh.install(r, io3)
}

// install reads an APK and answers as the package manager does.
func (sh *shell) install(r io.Reader, io3 stdio) int {
	data, err := io.ReadAll(io.LimitReader(r, maxAPK+1))
	if err != nil || len(data) > maxAPK {
		fmt.Fprintln(io3.out, "Failure [INSTALL_FAILED_INSUFFICIENT_STORAGE]")
		return 1
	}
	const tmp = "/data/app/vmdl1000.tmp/base.apk"
	pkg, err := apkPackage(data)
	switch {
	case errors.Is(err, errNotAPK):
		fmt.Fprintf(io3.out, "Failure [INSTALL_PARSE_FAILED_NOT_APK: Failed to parse %s: Failed to load asset path %s]\n", tmp, tmp)
		return 1
	case errors.Is(err, errNoManifest):
		fmt.Fprintf(io3.out, "Failure [INSTALL_PARSE_FAILED_MANIFEST_MALFORMED: Failed parse during installPackageLI: %s (at Binary XML file line #-1): AndroidManifest.xml missing]\n", tmp)
		return 1
	case err != nil:
		fmt.Fprintf(io3.out, "Failure [INSTALL_PARSE_FAILED_MANIFEST_MALFORMED: Failed parse during installPackageLI: %s (at Binary XML file line #-1): %v]\n", tmp, err)
		return 1
	}
	if sh.d.hasApp(sh.ctx, pkg) && !sh.d.isInstalled(pkg) {
		// The sim's own apps come with the system image here.
		fmt.Fprintf(io3.out, "Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Existing package %s signatures do not match newer version; ignoring!]\n", pkg)
		return 1
	}
	sh.d.mu.Lock()
	if sh.d.installed == nil {
		sh.d.installed = map[string]bool{}
	}
	sh.d.installed[pkg] = true
	sh.d.mu.Unlock()
	fmt.Fprintln(io3.out, "Success")
	return 0
}

// uninstall is pm uninstall PKG.
func (sh *shell) uninstall(pkg string, io3 stdio) int {
	sh.d.mu.Lock()
	ok := sh.d.installed[pkg]
	delete(sh.d.installed, pkg)
	sh.d.mu.Unlock()
	if !ok {
		fmt.Fprintln(io3.out, "Failure [DELETE_FAILED_INTERNAL_ERROR]")
		return 1
	}
	fmt.Fprintln(io3.out, "Success")
	return 0
}

func (d *Device) isInstalled(pkg string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.installed[pkg]
}

// pmInstall parses pm install's (or cmd package install's) arguments:
// flags, then a file, or -S SIZE with the APK on stdin (adb install's
// streamed install).
func (sh *shell) pmInstall(args []string, io3 stdio) int {
	size := int64(-1)
	var file string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-S" && i+1 < len(args):
			n, err := strconv.ParseInt(args[i+1], 10, 64)
			if err != nil || n < 0 {
				fmt.Fprintf(io3.err, "Error: invalid size: %s\n", args[i+1])
				return 1
			}
			size, i = n, i+1
		case a == "-i" || a == "--user" || a == "--install-location" || a == "-p":
			i++ // these take a value
		case strings.HasPrefix(a, "-"):
		default:
			file = a
		}
	}
	switch {
	case size >= 0:
		return sh.install(io.LimitReader(io3.in, size), io3)
	case file != "":
		return sh.installFile(file, io3)
	}
	fmt.Fprintln(io3.err, "Error: must either specify a package size or an APK file")
	return 1
}

var (
	errNotAPK     = errors.New("not a zip archive")
	errNoManifest = errors.New("AndroidManifest.xml missing")
)

// apkPackage reads the package attribute of the manifest element of an
// APK's binary AndroidManifest.xml (the resource chunks of ResourceTypes.h:
// an XML chunk, its string pool, then element chunks).
func apkPackage(apk []byte) (string, error) {
	zr, err := zip.NewReader(bytes.NewReader(apk), int64(len(apk)))
	if err != nil {
		return "", errNotAPK
	}
	var manifest []byte
	for _, f := range zr.File {
		if f.Name != "AndroidManifest.xml" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return "", err
		}
		manifest, err = io.ReadAll(io.LimitReader(rc, 16<<20))
		rc.Close()
		if err != nil {
			return "", err
		}
	}
	if manifest == nil {
		return "", errNoManifest
	}
	return manifestPackage(manifest)
}

// Resource chunk types (ResourceTypes.h).
const (
	chunkStringPool   = 0x0001
	chunkXML          = 0x0003
	chunkXMLStartElem = 0x0102
	stringPoolUTF8    = 1 << 8
	typeString        = 0x03
)

func manifestPackage(b []byte) (string, error) {
	le := binary.LittleEndian
	if len(b) < 8 || le.Uint16(b) != chunkXML {
		return "", errors.New("not a binary XML file")
	}
	var pool []string
	for off := int(le.Uint16(b[2:])); off+8 <= len(b); {
		typ, hsize, size := le.Uint16(b[off:]), int(le.Uint16(b[off+2:])), int(le.Uint32(b[off+4:]))
		if size < 8 || off+size > len(b) || hsize > size {
			return "", errors.New("a chunk runs past the file")
		}
		c := b[off : off+size]
		switch typ {
		case chunkStringPool:
			var err error
			if pool, err = readStringPool(c); err != nil {
				return "", err
			}
		case chunkXMLStartElem:
			if len(c) < 36 {
				return "", errors.New("a short element chunk")
			}
			str := func(i uint32) string {
				if int(i) < len(pool) {
					return pool[i]
				}
				return ""
			}
			if str(le.Uint32(c[20:])) != "manifest" {
				return "", errors.New("the first element is not <manifest>")
			}
			start, asize, count := int(le.Uint16(c[24:])), int(le.Uint16(c[26:])), int(le.Uint16(c[28:]))
			for i := range count {
				a := 16 + start + i*asize
				if a+20 > len(c) {
					break
				}
				if str(le.Uint32(c[a+4:])) != "package" {
					continue
				}
				if raw := le.Uint32(c[a+8:]); raw != 0xffffffff {
					return str(raw), nil
				}
				if c[a+15] == typeString {
					return str(le.Uint32(c[a+16:])), nil
				}
			}
			return "", errors.New("<manifest> has no package attribute")
		}
		off += size
	}
	return "", errors.New("no <manifest> element")
}

func readStringPool(c []byte) ([]string, error) {
	le := binary.LittleEndian
	if len(c) < 28 {
		return nil, errors.New("a short string pool")
	}
	count, flags, start := int(le.Uint32(c[8:])), le.Uint32(c[16:]), int(le.Uint32(c[20:]))
	hsize := int(le.Uint16(c[2:]))
	if count > (len(c)-hsize)/4 || start > len(c) {
		return nil, errors.New("a string pool that runs past its chunk")
	}
	out := make([]string, count)
	for i := range count {
		p := start + int(le.Uint32(c[hsize+4*i:]))
		if p >= len(c) {
			return nil, errors.New("a string past its pool")
		}
		if flags&stringPoolUTF8 != 0 {
			_, p = utf8Len(c, p) // the length in UTF-16 units
			n, q := utf8Len(c, p)
			if q+n > len(c) {
				return nil, errors.New("a string past its pool")
			}
			out[i] = string(c[q : q+n])
			continue
		}
		if p+2 > len(c) {
			return nil, errors.New("a string past its pool")
		}
		n := int(le.Uint16(c[p:]))
		p += 2
		if n&0x8000 != 0 && p+2 <= len(c) {
			n = (n&0x7fff)<<16 | int(le.Uint16(c[p:]))
			p += 2
		}
		if p+2*n > len(c) {
			return nil, errors.New("a string past its pool")
		}
		u := make([]uint16, n)
		for j := range u {
			u[j] = le.Uint16(c[p+2*j:])
		}
		out[i] = string(utf16.Decode(u))
	}
	return out, nil
}

// utf8Len reads a UTF-8 pool's length: one byte, or two when the first has
// its high bit set.
func utf8Len(c []byte, p int) (int, int) {
	if p >= len(c) {
		return 0, p
	}
	n := int(c[p])
	if n&0x80 != 0 && p+1 < len(c) {
		return (n&0x7f)<<8 | int(c[p+1]), p + 2
	}
	return n, p + 1
}
