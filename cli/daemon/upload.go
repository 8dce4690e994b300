package daemon

// One-time upload links of MCP over HTTP: phone_upload_link gives an agent
// a URL, UploadPath + a random 32-byte token, to which it sends one file
// (up to 100 MiB) with one PUT. The file goes into the phone's folder on
// the computer through the same strict-name, os.Root write path as
// phone_upload.
//
// The link itself is the credential: the request needs no bearer token,
// because the tool an agent's host uploads with (curl -T, a sandboxed
// fetch) may not be able to add headers, and the link is made for a
// session that did show the token. A link is 256 random bits, works once,
// expires after uploadLinkTTL, and dies with its MCP session; the daemon
// keeps only its SHA-256. A request that does carry an Authorization
// header must carry the right token: a wrong one is refused like on /mcp.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/mcpserver"
)

// UploadPath is where upload links live: UploadPath + token.
const UploadPath = "/upload/"

// uploadLinkTTL is how long a link waits for its PUT.
const uploadLinkTTL = 5 * time.Minute

// uploadLinks holds the links not yet used or expired, by the SHA-256 of
// their token. A link used or expired is kept until another TTL passes,
// so that a late request hears 410 rather than 404.
type uploadLinks struct {
	now func() time.Time
	ttl time.Duration

	mu    sync.Mutex
	links map[[sha256.Size]byte]*uploadLink
}

// uploadLink is one link: who made it and where its file goes.
type uploadLink struct {
	mcpID   string         // the MCP session that asked
	sess    *agent.Session // its agent session
	device  string
	path    string
	max     int64 // bytes the body may have
	expires time.Time
	used    bool
}

func newUploadLinks() *uploadLinks {
	return &uploadLinks{now: time.Now, ttl: uploadLinkTTL, links: map[[sha256.Size]byte]*uploadLink{}}
}

// add stores a link and returns its token.
func (u *uploadLinks) add(l *uploadLink) (string, time.Time) {
	b := make([]byte, 32)
	rand.Read(b) //nolint:errcheck // never fails
	tok := base64.RawURLEncoding.EncodeToString(b)
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.now()
	u.sweep(now)
	l.expires = now.Add(u.ttl)
	u.links[sha256.Sum256([]byte(tok))] = l
	return tok, l.expires
}

// sweep forgets links a TTL past their expiry; u.mu is held.
func (u *uploadLinks) sweep(now time.Time) {
	for k, l := range u.links {
		if now.After(l.expires.Add(u.ttl)) {
			delete(u.links, k)
		}
	}
}

// claim marks the link of tok used and returns it, or the status and
// error code of a refusal.
func (u *uploadLinks) claim(tok string) (*uploadLink, int, string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.now()
	u.sweep(now)
	l := u.links[sha256.Sum256([]byte(tok))]
	switch {
	case l == nil:
		return nil, http.StatusNotFound, "unknown_link"
	case l.used:
		return nil, http.StatusGone, "link_used"
	case !now.Before(l.expires):
		l.used = true
		return nil, http.StatusGone, "link_expired"
	}
	l.used = true
	return l, 0, ""
}

// dropSession ends the links of an MCP session that ended.
func (u *uploadLinks) dropSession(mcpID string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, l := range u.links {
		if l.mcpID == mcpID {
			l.used = true
		}
	}
}

// httpSession is the mcpserver.Session of one MCP session over HTTP: its
// agent session, and upload links.
type httpSession struct {
	*agent.Session
	mcpID string
	h     *httpSessions
}

var _ mcpserver.UploadLinker = httpSession{}

// UploadLink implements mcpserver.UploadLinker.
func (s httpSession) UploadLink(ctx context.Context, device, path string, size int64) (*mcpserver.UploadLink, error) {
	if size < 0 || size > mcpserver.MaxUploadLinkBytes {
		return nil, agent.Errorf(agent.CodeInvalidArgument, "size: must be from 0 to %d bytes", mcpserver.MaxUploadLinkBytes)
	}
	if err := s.CheckUpload(device, path); err != nil {
		return nil, err
	}
	max := int64(mcpserver.MaxUploadLinkBytes)
	if size > 0 {
		max = size
	}
	tok, exp := s.h.uploads.add(&uploadLink{mcpID: s.mcpID, sess: s.Session, device: device, path: path, max: max})
	return &mcpserver.UploadLink{URL: uploadBase(ctx) + UploadPath + tok, Method: http.MethodPut, ExpiresAt: exp}, nil
}

type uploadBaseKey struct{}

// withUploadBase remembers, for the links made during r, the scheme and
// host r reached the daemon at: the agent can reach that address. The Host
// header comes from an agent that showed the token, so a forged one only
// misdirects that agent's own upload.
func withUploadBase(ctx context.Context, r *http.Request) context.Context {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	if r.Host == "" {
		return ctx
	}
	return context.WithValue(ctx, uploadBaseKey{}, scheme+"://"+r.Host)
}

func uploadBase(ctx context.Context) string {
	if b, ok := ctx.Value(uploadBaseKey{}).(string); ok {
		return b
	}
	return "http://localhost"
}

// serveUpload answers a request to an upload link.
func (h *httpMCP) serveUpload(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		if _, refusal := h.auth.authorize(r); refusal != "" {
			h.auth.refuse(w, r, refusal)
			return
		}
	}
	if r.Method != http.MethodPut {
		w.Header().Set("Allow", http.MethodPut)
		writeJSONError(w, http.StatusMethodNotAllowed, "method_not_allowed", "an upload link takes one PUT with the file as its body")
		return
	}
	tok := strings.TrimPrefix(r.URL.Path, UploadPath)
	if tok == "" || strings.Contains(tok, "/") {
		writeJSONError(w, http.StatusNotFound, "unknown_link", "no such upload link; get one with phone_upload_link")
		return
	}
	l, status, code := h.sessions.uploads.claim(tok)
	if l == nil {
		msg := map[string]string{
			"unknown_link": "no such upload link; get one with phone_upload_link",
			"link_used":    "this upload link was used already; get a new one with phone_upload_link",
			"link_expired": "this upload link expired; get a new one with phone_upload_link",
		}[code]
		writeJSONError(w, status, code, msg)
		return
	}
	if !h.sessions.current(l.mcpID, l.sess) {
		writeJSONError(w, http.StatusGone, "link_expired", "the MCP session that made this upload link ended; get a new one with phone_upload_link")
		return
	}
	if r.ContentLength > l.max {
		writeJSONError(w, http.StatusRequestEntityTooLarge, "too_large", tooLargeMessage(l.max))
		return
	}
	// Read a byte past the limit so that UploadFrom sees a body too long
	// and writes nothing.
	body := http.MaxBytesReader(w, r.Body, l.max+1)
	n, err := l.sess.UploadFrom(r.Context(), l.device, l.path, body, l.max)
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"path": l.path, "size": n}) //nolint:errcheck // the client went away
		return
	case errors.Is(err, agent.ErrUploadTooLarge), errors.As(err, &mbe):
		writeJSONError(w, http.StatusRequestEntityTooLarge, "too_large", tooLargeMessage(l.max))
		return
	}
	e, ok := agent.AsError(err)
	if !ok {
		h.sessions.log.Error("upload link", "device", l.device, "err", err)
		writeJSONError(w, http.StatusInternalServerError, string(agent.CodeInternal), "the file could not be saved")
		return
	}
	status = http.StatusBadRequest
	switch e.Code {
	case agent.CodeNotLeased, agent.CodeLeaseHeld, agent.CodeStopped, agent.CodeDeviceOffline, agent.CodeDriverRestarting:
		status = http.StatusConflict
	case agent.CodeUnsupported, agent.CodeNotFound:
		status = http.StatusUnprocessableEntity
	}
	writeJSONError(w, status, string(e.Code), e.Message)
}

func tooLargeMessage(max int64) string {
	return "the file is larger than this link takes (" + strconv.FormatInt(max, 10) + " bytes); nothing was saved"
}
