package sdk

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

func TestRedact(t *testing.T) {
	for _, tt := range []struct {
		name   string
		msg    proto.Message
		secret string
		keep   string
	}{
		{"pin", &pb.UnlockRequest{DeviceId: "d1", Pin: "482913"}, "482913", "d1"},
		{"typed text", &pb.ActRequest{DeviceId: "d1", Action: &pb.ActRequest_TypeText{TypeText: &pb.TypeText{Text: "hunter2", Submit: true}}}, "hunter2", "submit"},
		{"input text", &pb.InputRequest{DeviceId: "d1", Event: &pb.InputRequest_Text{Text: "s3cret"}}, "s3cret", "d1"},
		{"pushed bytes", &pb.PushFileRequest{Part: &pb.PushFileRequest_Chunk{Chunk: []byte("payload!")}}, "payload!", ""},
		{"pulled bytes", &pb.PullFileResponse{Chunk: []byte("payload!")}, "payload!", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			orig := proto.Clone(tt.msg)
			got := RedactedText(tt.msg)
			if strings.Contains(got, tt.secret) {
				t.Errorf("got %q; the secret %q is in it", got, tt.secret)
			}
			if !strings.Contains(got, tt.keep) {
				t.Errorf("got %q; want %q kept", got, tt.keep)
			}
			if !proto.Equal(orig, tt.msg) {
				t.Error("Redact changed the original message")
			}
		})
	}
	if Redact(nil) != nil {
		t.Error("Redact(nil) is not nil")
	}
}
