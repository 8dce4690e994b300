package adbd

import (
	"encoding/binary"
	"testing"
	"unicode/utf16"
)

// TestManifestPackageUTF16: aapt writes the manifest's string pool in
// UTF-16 (no UTF-8 flag); the package may be a typed string only (raw value
// none); damaged files are refused, never read past.
func TestManifestPackageUTF16(t *testing.T) {
	le := binary.LittleEndian
	build := func(pkg string, raw bool) []byte {
		strs := []string{"manifest", "package", pkg}
		var data []byte
		var offs []uint32
		for _, s := range strs {
			offs = append(offs, uint32(len(data)))
			u := utf16.Encode([]rune(s))
			data = le.AppendUint16(data, uint16(len(u)))
			for _, c := range u {
				data = le.AppendUint16(data, c)
			}
			data = le.AppendUint16(data, 0)
		}
		pool := make([]byte, 28+4*len(strs))
		le.PutUint16(pool, chunkStringPool)
		le.PutUint16(pool[2:], 28)
		le.PutUint32(pool[8:], uint32(len(strs)))
		le.PutUint32(pool[20:], uint32(len(pool)))
		for i, o := range offs {
			le.PutUint32(pool[28+4*i:], o)
		}
		pool = append(pool, data...)
		for len(pool)%4 != 0 {
			pool = append(pool, 0)
		}
		le.PutUint32(pool[4:], uint32(len(pool)))
		elem := make([]byte, 56)
		le.PutUint16(elem, chunkXMLStartElem)
		le.PutUint16(elem[2:], 16)
		le.PutUint32(elem[4:], 56)
		le.PutUint32(elem[16:], 0xffffffff)
		le.PutUint16(elem[24:], 20)
		le.PutUint16(elem[26:], 20)
		le.PutUint16(elem[28:], 1)
		a := elem[36:]
		le.PutUint32(a, 0xffffffff)
		le.PutUint32(a[4:], 1)
		le.PutUint32(a[8:], 0xffffffff)
		if raw {
			le.PutUint32(a[8:], 2)
		}
		a[15] = typeString
		le.PutUint32(a[16:], 2)
		out := make([]byte, 8)
		le.PutUint16(out, chunkXML)
		le.PutUint16(out[2:], 8)
		out = append(append(out, pool...), elem...)
		le.PutUint32(out[4:], uint32(len(out)))
		return out
	}
	for _, raw := range []bool{true, false} {
		if got, err := manifestPackage(build("org.exämple.app", raw)); err != nil || got != "org.exämple.app" {
			t.Errorf("raw %v: manifestPackage = %q, %v; want org.exämple.app", raw, got, err)
		}
	}
	good := build("a.b", true)
	for _, bad := range [][]byte{nil, good[:7], good[:40], append([]byte{0x01, 0x00}, good[2:]...)} {
		if got, err := manifestPackage(bad); err == nil {
			t.Errorf("a damaged manifest of %d bytes gave %q", len(bad), got)
		}
	}
	cut := append([]byte(nil), good...)
	le.PutUint32(cut[8+4:], 1<<30) // the pool's size runs past the file
	if _, err := manifestPackage(cut); err == nil {
		t.Error("a pool that runs past the file was read")
	}
}
