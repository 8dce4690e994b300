package sdk

import (
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

// Redacted replaces the value of a sensitive field.
const Redacted = "[redacted]"

// Redact returns a copy of m in which every field marked
// (pinky.driver.v1.sensitive) holds Redacted (strings) or nothing (bytes).
// Log the copy, never m itself.
func Redact(m proto.Message) proto.Message {
	if m == nil {
		return nil
	}
	c := proto.Clone(m)
	redact(c.ProtoReflect())
	return c
}

// RedactedText is Redact rendered as compact text, for a log line.
func RedactedText(m proto.Message) string {
	return prototext.MarshalOptions{}.Format(Redact(m))
}

func redact(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if isSensitive(fd) {
			switch fd.Kind() {
			case protoreflect.StringKind:
				m.Set(fd, protoreflect.ValueOfString(Redacted))
			default:
				m.Clear(fd)
			}
			return true
		}
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			return true
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				redact(l.Get(i).Message())
			}
		case fd.IsMap():
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					redact(mv.Message())
					return true
				})
			}
		default:
			redact(v.Message())
		}
		return true
	})
}

func isSensitive(fd protoreflect.FieldDescriptor) bool {
	opts := fd.Options()
	if opts == nil {
		return false
	}
	s, ok := proto.GetExtension(opts, pb.E_Sensitive).(bool)
	return ok && s
}
