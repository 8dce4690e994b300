package fmp4

import (
	"encoding/binary"
	"fmt"
	"os"
)

// Repair cuts a fragmented MP4 file after its last whole fragment (a moof
// box and the mdat after it): what a crash in the middle of writing a
// fragment leaves is cut off, so players accept the file. It returns the
// new length. A file without a whole init segment is left alone and gets an
// error.
func Repair(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := info.Size()
	var (
		pos, good int64
		moov      bool
		moofEnd   int64 = -1 // end of a moof waiting for its mdat
		hdr       [16]byte
	)
	for pos+8 <= size {
		if _, err := f.ReadAt(hdr[:8], pos); err != nil {
			return 0, err
		}
		n := int64(binary.BigEndian.Uint32(hdr[:4]))
		typ := string(hdr[4:8])
		if n == 1 { // 64-bit size
			if pos+16 > size {
				break
			}
			if _, err := f.ReadAt(hdr[8:16], pos+8); err != nil {
				return 0, err
			}
			n = int64(binary.BigEndian.Uint64(hdr[8:16]))
		}
		if n < 8 || pos+n > size {
			break
		}
		switch typ {
		case "moov":
			moov, good = true, pos+n
		case "moof":
			moofEnd = pos + n
		case "mdat":
			if moov && moofEnd == pos {
				good = pos + n
			}
			moofEnd = -1
		}
		pos += n
	}
	if !moov {
		return 0, fmt.Errorf("fmp4: repair %s: no whole init segment", path)
	}
	if good < size {
		if err := f.Truncate(good); err != nil {
			return 0, err
		}
	}
	return good, f.Sync()
}
