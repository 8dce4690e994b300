package remote

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/pinky-gateway/pinky/internal/pki"
	hostv1 "github.com/pinky-gateway/pinky/proto/pinky/host/v1"
)

// pairDialTimeout bounds Pair's dial with its TLS handshake when ctx has
// no earlier deadline.
const pairDialTimeout = 10 * time.Second

// Pair pairs this host with the gateway at addr, as `pinky host --pair
// CODE` does: code is what `pinky hosts add NAME` printed on the gateway
// (pki's Pairing.Code: the token and the gateway's fingerprint). Pair dials
// with pki's PairingTLS, so a gateway without that fingerprint is refused
// in the TLS handshake, before the token is sent (the error wraps
// pki.ErrPinMismatch). It then sends the token with a fresh certificate
// request, and stores the certificate the gateway issued, its key and the
// pin in dir (pki's Request.Finish). The returned Host's ClientTLS is what
// Serve links with, now and after every restart (pki.LoadHost(dir)).
//
// A gateway's refusal of the token wraps pki.ErrTokenUnknown,
// pki.ErrTokenUsed or pki.ErrTokenExpired, and its text says what to do.
func Pair(ctx context.Context, addr, code, dir string) (*pki.Host, error) {
	tok, pin, err := pki.ParseCode(code)
	if err != nil {
		return nil, err
	}
	req, err := pki.NewRequest()
	if err != nil {
		return nil, err
	}
	dialCtx, cancel := context.WithTimeout(ctx, pairDialTimeout)
	c, err := (&tls.Dialer{Config: pki.PairingTLS(pin)}).DialContext(dialCtx, "tcp", addr)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("pairing with %s: %w", addr, err)
	}
	// The handshake is done and the gateway proved it holds the pinned
	// CA's certificate: from here on the token may be sent.
	cc, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithContextDialer(dialOnce(c)),
		// Insecure only to gRPC: the connection is already TLS, with the
		// gateway verified by the pin above.
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxPairBytes), grpc.MaxCallSendMsgSize(maxPairBytes)),
	)
	if err != nil {
		c.Close()
		return nil, err
	}
	defer cc.Close()
	resp, err := hostv1.NewPairingServiceClient(cc).Pair(ctx, &hostv1.PairRequest{Token: tok.Reveal(), Csr: req.CSR})
	if err != nil {
		return nil, fmt.Errorf("pairing with %s: %w", addr, pairingError(err))
	}
	h, err := req.Finish(dir, pin, pki.Issued{Certificate: resp.GetCertificate(), CA: resp.GetCa()})
	if err != nil {
		return nil, fmt.Errorf("pairing with %s: %w", addr, err)
	}
	return h, nil
}

// pairingError turns the gateway's refusal back into pki's error, with the
// gateway's advice for the person as its text.
func pairingError(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	var sentinel error
	switch st.Code() {
	case codes.NotFound:
		sentinel = pki.ErrTokenUnknown
	case codes.AlreadyExists:
		sentinel = pki.ErrTokenUsed
	case codes.FailedPrecondition:
		sentinel = pki.ErrTokenExpired
	case codes.InvalidArgument:
		sentinel = pki.ErrBadRequest
	default:
		return err
	}
	return &refusal{msg: st.Message(), err: sentinel}
}

// refusal is a pairing the gateway refused: the gateway's words, and the
// pki error they stand for.
type refusal struct {
	msg string
	err error
}

func (r *refusal) Error() string { return r.msg }
func (r *refusal) Unwrap() error { return r.err }
