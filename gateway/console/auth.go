package console

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
)

// Link returns a new one-time login link to the started server. Its token
// is valid for LinkTTL and works once; the browser that opens it gets a
// session cookie.
func (s *Server) Link() string {
	tok := randomToken()
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, exp := range s.tokens {
		if now.After(exp) {
			delete(s.tokens, k)
		}
	}
	s.tokens[sha256.Sum256([]byte(tok))] = now.Add(LinkTTL)
	return "http://" + s.addr + "/login?t=" + tok
}

// randomToken returns 32 random bytes, base64url without padding.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b) //nolint:errcheck // never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// Tokens and cookies are kept as SHA-256 hashes: a map lookup on the hash
// tells an attacker nothing through timing about the secret itself.

// useToken consumes a login token, reporting whether it was valid.
func (s *Server) useToken(tok string) bool {
	if tok == "" {
		return false
	}
	k := sha256.Sum256([]byte(tok))
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tokens[k]
	delete(s.tokens, k)
	return ok && !s.now().After(exp)
}

// newSession returns a new session cookie value.
func (s *Server) newSession() string {
	v := randomToken()
	s.mu.Lock()
	s.sessions[sha256.Sum256([]byte(v))] = true
	s.mu.Unlock()
	return v
}

// hasSession reports whether r carries a valid session cookie.
func (s *Server) hasSession(r *http.Request) bool {
	c, err := r.Cookie(s.cookieName())
	if err != nil || c.Value == "" {
		return false
	}
	k := sha256.Sum256([]byte(c.Value))
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[k]
}

// cookieName is the session cookie's name: its port in it, so that the
// consoles of two daemons (two data folders) do not log each other out
// (cookies do not tell ports apart).
func (s *Server) cookieName() string {
	s.mu.Lock()
	addr := s.addr
	s.mu.Unlock()
	_, port, _ := net.SplitHostPort(addr)
	return cookiePrefix + port
}

// hostOK reports whether the Host header names this server: its loopback
// address and port (or localhost and its port). Any other name may be a DNS
// rebinding attack: a page on evil.example whose name now resolves to
// 127.0.0.1 would otherwise be same-origin with the console.
func (s *Server) hostOK(host string) bool {
	s.mu.Lock()
	addr := s.addr
	s.mu.Unlock()
	if addr == "" {
		return false
	}
	if strings.EqualFold(host, addr) {
		return true
	}
	_, port, _ := net.SplitHostPort(addr)
	return strings.EqualFold(host, net.JoinHostPort("localhost", port))
}

// originOK reports whether the request's Origin, when it has one, is this
// server's own (the Host, already checked by hostOK).
func originOK(r *http.Request) bool {
	o := r.Header.Get("Origin")
	return o == "" || strings.EqualFold(o, "http://"+r.Host)
}

// guard runs the checks every request passes before its route: the Host,
// the session (except for /login), and the Origin of state-changing
// requests and of WebSockets.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		// The login link carries its token in the URL: never send it on.
		h.Set("Referrer-Policy", "no-referrer")
		if !s.hostOK(r.Host) {
			s.log.Warn("console: refused a request for another host", "host", r.Host)
			http.Error(w, "wrong host: open the console with `pinky open`", http.StatusMisdirectedRequest)
			return
		}
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; "+
			"connect-src 'self' ws://"+r.Host+"; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
		if r.URL.Path != "/login" && !s.hasSession(r) {
			refuse(w)
			return
		}
		ws := strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
		if (ws || !safeMethod(r.Method)) && !originOK(r) {
			s.log.Warn("console: refused a cross-origin request", "origin", r.Header.Get("Origin"), "path", r.URL.Path)
			http.Error(w, "cross-origin request refused", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// refusedPage is what a browser without a session sees.
const refusedPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Pinky: log in</title></head>
<body>
<h1>Pinky console</h1>
<p id="refused">You are not logged in, or your link was already used or has expired.
Run <code>pinky open</code> on this computer to open the console with a new link.</p>
</body></html>
`

func refuse(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusUnauthorized)
	w.Write([]byte(refusedPage)) //nolint:errcheck // the client went away
}

// handleLogin trades a one-time token for a session cookie.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if !s.useToken(r.URL.Query().Get("t")) {
		s.log.Warn("console: refused a login link (unknown, used or expired)")
		refuse(w)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     s.cookieName(),
		Value:    s.newSession(),
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
	})
	s.log.Info("console: new session")
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
