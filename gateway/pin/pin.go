// Package pin keeps the PIN of each phone in the OS keychain (macOS
// Keychain, Windows Credential Manager, a Secret Service over D-Bus on
// Linux), for the gateway's automatic unlock. It never writes a PIN
// anywhere else: where no keychain is reachable it refuses with
// ErrNoKeychain, and there is no fallback to a file.
package pin

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/zalando/go-keyring"
)

// Service is the keychain service the PINs are saved under; the account is
// the device id.
const Service = "pinky"

var (
	// ErrNoPIN means no PIN is saved for the device.
	ErrNoPIN = errors.New("no PIN saved")
	// ErrNoKeychain means the OS keychain could not be reached.
	ErrNoKeychain = errors.New("no keychain reachable: Pinky never stores a PIN in a plain file")
)

// Keychain is the part of an OS keychain the store uses. Get and Delete
// return keyring.ErrNotFound for a missing secret.
type Keychain interface {
	Set(service, account, secret string) error
	Get(service, account string) (string, error)
	Delete(service, account string) error
}

// OSKeychain is the machine's keychain, through go-keyring.
type OSKeychain struct{}

func (OSKeychain) Set(service, account, secret string) error {
	return keyring.Set(service, account, secret)
}
func (OSKeychain) Get(service, account string) (string, error) {
	return keyring.Get(service, account)
}
func (OSKeychain) Delete(service, account string) error { return keyring.Delete(service, account) }

// Store saves PINs per device in a keychain.
type Store struct{ kc Keychain }

// New returns a store over kc.
func New(kc Keychain) *Store { return &Store{kc: kc} }

// OS returns a store over the machine's keychain.
func OS() *Store { return New(OSKeychain{}) }

// maxLen bounds a PIN (or a lock screen password).
const maxLen = 64

// Set saves pin for device, replacing a saved one.
func (s *Store) Set(device, pin string) error {
	if err := checkDevice(device); err != nil {
		return err
	}
	switch {
	case pin == "":
		return errors.New("the PIN is empty")
	case len(pin) > maxLen:
		return fmt.Errorf("the PIN is longer than %d characters", maxLen)
	case strings.IndexFunc(pin, unicode.IsControl) >= 0:
		return errors.New("the PIN holds a control character")
	}
	return s.wrap(device, s.kc.Set(Service, device, pin))
}

// Get returns the PIN saved for device, or ErrNoPIN.
func (s *Store) Get(device string) (string, error) {
	if err := checkDevice(device); err != nil {
		return "", err
	}
	p, err := s.kc.Get(Service, device)
	if err != nil {
		return "", s.wrap(device, err)
	}
	return p, nil
}

// PIN is Get for the gateway's automatic unlock: ok is false when no PIN is
// saved.
func (s *Store) PIN(device string) (pin string, ok bool, err error) {
	p, err := s.Get(device)
	if errors.Is(err, ErrNoPIN) {
		return "", false, nil
	}
	return p, err == nil, err
}

// Forget removes the PIN saved for device; ErrNoPIN when there was none.
func (s *Store) Forget(device string) error {
	if err := checkDevice(device); err != nil {
		return err
	}
	return s.wrap(device, s.kc.Delete(Service, device))
}

func checkDevice(device string) error {
	if strings.TrimSpace(device) == "" || strings.IndexFunc(device, unicode.IsControl) >= 0 {
		return fmt.Errorf("device %q: want a device id (pinky devices lists them)", device)
	}
	return nil
}

// wrap names a keychain error: a missing secret is ErrNoPIN; anything else
// means the keychain could not be used, and says that no file is used
// instead. The error never holds the PIN: keychains do not echo secrets.
func (s *Store) wrap(device string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, keyring.ErrNotFound):
		return fmt.Errorf("%s: %w", device, ErrNoPIN)
	case errors.Is(err, keyring.ErrSetDataTooBig):
		return fmt.Errorf("the PIN is too long for this keychain")
	}
	return fmt.Errorf("%w (%v)", ErrNoKeychain, err)
}
