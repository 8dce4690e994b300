"""Driver errors and how they travel: SPEC.md section 2 and its non-Go part.

A failed call is a gRPC status. Its detail is a google.rpc.Status, with the
same code and message as the call's status, whose details hold one
google.rpc.ErrorInfo of domain "pinky.driver.v1" naming the reason; the
serialized Status goes in the grpc-status-details-bin trailer.
"""

import grpc
from google.protobuf import any_pb2

from google.rpc import error_details_pb2, status_pb2

DOMAIN = "pinky.driver.v1"

# reason -> gRPC code, as in SPEC.md's table.
CODES = {
    "DEVICE_NOT_FOUND": grpc.StatusCode.NOT_FOUND,
    "APP_NOT_FOUND": grpc.StatusCode.NOT_FOUND,
    "DEVICE_OFFLINE": grpc.StatusCode.UNAVAILABLE,
    "DEVICE_LOCKED": grpc.StatusCode.FAILED_PRECONDITION,
    "NO_FOCUSED_FIELD": grpc.StatusCode.FAILED_PRECONDITION,
    "INVALID_ARGUMENT": grpc.StatusCode.INVALID_ARGUMENT,
    "UNSUPPORTED": grpc.StatusCode.UNIMPLEMENTED,
    "INTERNAL": grpc.StatusCode.INTERNAL,
}


class DriverError(Exception):
    """DriverError is a failure with one of SPEC.md's reasons and a message
    that a person can act on."""

    def __init__(self, reason, message):
        super().__init__(message)
        if reason not in CODES:
            raise ValueError("unknown reason %r" % reason)
        self.reason = reason
        self.message = message


def invalid(message):
    """invalid is a DriverError of reason INVALID_ARGUMENT."""
    return DriverError("INVALID_ARGUMENT", message)


def status_details(code, reason, message):
    """status_details is the grpc-status-details-bin value of a failure: a
    serialized google.rpc.Status holding an ErrorInfo."""
    info = any_pb2.Any()
    # Pack gives the type URL type.googleapis.com/google.rpc.ErrorInfo.
    info.Pack(error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN))
    return status_pb2.Status(code=code.value[0], message=message, details=[info]).SerializeToString()


def abort(context, err):
    """abort ends the call with err's code, message and detail. grpcio
    base64-encodes a -bin trailer itself; the value is raw bytes here."""
    code = CODES[err.reason]
    context.set_trailing_metadata((("grpc-status-details-bin", status_details(code, err.reason, err.message)),))
    context.abort(code, err.message)
