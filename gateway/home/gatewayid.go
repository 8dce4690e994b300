package home

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pinky-gateway/pinky/internal/atomicfile"
)

// GatewayIDFile is the file in the data folder that names its gateway.
const GatewayIDFile = "gateway.id"

// GatewayID returns the id of the gateway this data folder is: random,
// made the first time and the same across the daemon's restarts. Gateways
// that share a PostgreSQL database tell their sessions, tasks and leases
// apart by it, so a daemon that starts again ends its own last run's and
// never another's. A copied data folder copies the id: give each gateway a
// data folder of its own.
func (d Dirs) GatewayID() (string, error) {
	path := filepath.Join(d.Home, GatewayIDFile)
	b, err := os.ReadFile(path)
	if err == nil {
		id := strings.TrimSpace(string(b))
		if !validGatewayID(id) {
			return "", fmt.Errorf("%s holds no gateway id (%d bytes): remove it, and the daemon makes a new one", path, len(b))
		}
		return id, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	raw := make([]byte, 12)
	rand.Read(raw) //nolint:errcheck // never fails
	id := "gw-" + hex.EncodeToString(raw)
	if err := atomicfile.Write(path, []byte(id+"\n")); err != nil {
		return "", fmt.Errorf("the gateway id: %w", err)
	}
	return id, nil
}

// validGatewayID accepts what GatewayID makes, and any short plain id a
// person wrote there instead.
func validGatewayID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}
