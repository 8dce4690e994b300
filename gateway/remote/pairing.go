package remote

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pinky-gateway/pinky/internal/pki"
	hostv1 "github.com/pinky-gateway/pinky/proto/pinky/host/v1"
)

// maxPairBytes bounds a message on a pairing connection: a token and a
// certificate request, or two certificates, fit in far less. The peer is
// not authenticated yet, so it gets no more.
const maxPairBytes = 64 << 10

// Redeemer spends pairing tokens; pki's *Authority is one.
type Redeemer interface {
	Redeem(token string, csrDER []byte) (pki.Issued, error)
}

// What a person is told when the gateway refuses a pairing, by the token's
// fault. The host prints it as it comes.
const (
	msgTokenUnknown = "the gateway does not know this pairing code: check that it was copied whole, from the gateway at this address"
	msgTokenUsed    = "this pairing code was used already: a code pairs one host once; run `pinky hosts add NAME` on the gateway for a new one (and `pinky hosts remove NAME` if this host did not use it)"
	msgTokenExpired = "this pairing code expired (a code is good for 5 minutes): run `pinky hosts add NAME` on the gateway again"
)

// pairingStatus translates Redeem's error to the status the host receives.
// Each token error has its own code, so that the host can tell them apart,
// and a message that says what to do; other faults are not detailed to a
// peer that is not authenticated.
func pairingStatus(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pki.ErrTokenUnknown):
		return status.Error(codes.NotFound, msgTokenUnknown)
	case errors.Is(err, pki.ErrTokenUsed):
		return status.Error(codes.AlreadyExists, msgTokenUsed)
	case errors.Is(err, pki.ErrTokenExpired):
		return status.Error(codes.FailedPrecondition, msgTokenExpired)
	case errors.Is(err, pki.ErrBadRequest):
		return status.Error(codes.InvalidArgument, "the certificate request is invalid")
	default:
		return status.Error(codes.Internal, "the gateway could not issue a certificate; its log says why")
	}
}

// pairingServer is PairingService over a Redeemer.
type pairingServer struct {
	hostv1.UnimplementedPairingServiceServer
	r   Redeemer
	log *slog.Logger
}

func (s *pairingServer) Pair(_ context.Context, req *hostv1.PairRequest) (*hostv1.PairResponse, error) {
	if req.GetToken() == "" || len(req.GetCsr()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "a pairing needs the token and a certificate request")
	}
	is, err := s.r.Redeem(req.GetToken(), req.GetCsr())
	if err != nil {
		// pki's errors never hold the token.
		s.log.Warn("pairing refused", "err", err)
		return nil, pairingStatus(err)
	}
	s.log.Info("host paired over the network", "host", is.Name)
	return &hostv1.PairResponse{Certificate: is.Certificate, Ca: is.CA}, nil
}

// servePairing serves PairingService alone on a connection that came
// without a client certificate, until the peer closes it, PairTimeout
// passes or the gateway stops. Nothing else is registered, so any other
// call, the driver contract's included, is UNIMPLEMENTED.
func (g *Gateway) servePairing(tc *tls.Conn, log *slog.Logger) {
	log.Info("pairing connection")
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(maxPairBytes), grpc.MaxSendMsgSize(maxPairBytes))
	hostv1.RegisterPairingServiceServer(srv, &pairingServer{r: g.opts.Pairing, log: log})
	ctx, cancel := context.WithTimeout(g.stopping, g.opts.PairTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, srv.Stop)
	defer stop()
	// Serve returns when the one connection closes (listenOn's listener
	// closes with it) or when Stop ran.
	_ = srv.Serve(listenOn(tc))
	srv.Stop()
	tc.Close()
}
