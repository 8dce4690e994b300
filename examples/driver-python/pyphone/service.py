"""DriverService: the RPCs of pinky.driver.v1 this driver serves, by hand.

Each handler checks its request in SPEC.md's order (device id present, the
device known, the display known, then the fields), calls the phone and
builds the reply. RPCs of capabilities the driver does not declare are not
registered, so grpcio answers them UNIMPLEMENTED, as SPEC.md section 4 asks.
"""

import re
import threading
import time

import grpc

from pinky.driver.v1 import driver_pb2 as pb

from . import phone as vphone
from .errors import DriverError, abort, invalid

NAME = "pyphone"
VERSION = "0.1.0"
CAPABILITIES = [pb.CAPABILITY_WAIT_IDLE, pb.CAPABILITY_APPS]
# An absolute URL starts with a scheme and ":" (RFC 3986, SPEC.md 5.5).
ABSOLUTE_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


class Driver:
    """Driver serves one virtual phone."""

    def __init__(self, log):
        self.log = log
        self.phone = vphone.Phone("pyphone-1")
        self.stopping = threading.Event()

    # --- checks shared by the RPCs ---

    def _device(self, device_id, display_id=0):
        if not device_id:
            raise invalid("device_id is required")
        if device_id != self.phone.device_id:
            raise DriverError("DEVICE_NOT_FOUND", "no device %r: this driver has only %r" % (device_id, self.phone.device_id))
        if display_id != 0:
            raise invalid("display %d of device %r does not exist: this driver serves only display 0" % (display_id, device_id))
        return self.phone

    def _point(self, p, what):
        if p is None:
            raise invalid("%s is required" % what)
        if not (0 <= p.x < vphone.WIDTH and 0 <= p.y < vphone.HEIGHT):
            raise invalid("%s (%d, %d) is outside the %dx%d screen" % (what, p.x, p.y, vphone.WIDTH, vphone.HEIGHT))
        return p

    # --- the RPCs ---

    def get_info(self, req, context):
        return pb.GetInfoResponse(name=NAME, version=VERSION, description="A virtual phone, in Python: the example driver of SPEC.md's non-Go section",
                                  platforms=[pb.PLATFORM_OTHER], capabilities=CAPABILITIES)

    def watch_devices(self, req, context):
        done = threading.Event()
        context.add_callback(done.set)
        dev = pb.Device(id=self.phone.device_id, name="Python phone", model="PyPhone", manufacturer="Pinky",
                        platform=pb.PLATFORM_OTHER, os_version="1", connection=pb.CONNECTION_VIRTUAL, state=pb.DEVICE_STATE_ONLINE)
        yield pb.WatchDevicesResponse(kind=pb.DEVICE_EVENT_KIND_ADDED, device=dev)
        yield pb.WatchDevicesResponse(kind=pb.DEVICE_EVENT_KIND_SYNCED)
        # The phone never changes state: the stream stays open, sending
        # nothing, until the caller cancels it or the driver stops.
        while not done.wait(0.5) and not self.stopping.is_set():
            pass

    def get_screen(self, req, context):
        ph = self._device(req.device_id, req.display_id)
        app, keyboard, elements = ph.screen()
        out = pb.Screen(foreground_app=pb.App(id=app, label=vphone.APPS[app]), lock_state=pb.LOCK_STATE_UNLOCKED, screen_on=True,
                        width_px=vphone.WIDTH, height_px=vphone.HEIGHT, density_dpi=vphone.DPI, orientation=pb.ORIENTATION_PORTRAIT,
                        keyboard_shown=keyboard, captured_at_ms=int(time.time() * 1000))
        for i, e in enumerate(elements):
            left, top, right, bottom = e.bounds
            out.elements.append(pb.Element(id=i + 1, parent_id=e.parent + 1, class_name=e.cls, text=e.text, resource_id=e.resource_id,
                                           hint=e.hint, bounds=pb.Rect(left=left, top=top, right=right, bottom=bottom),
                                           clickable=e.clickable, focusable=e.editable, focused=e.focused, editable=e.editable,
                                           enabled=True, visible=True))
        return pb.GetScreenResponse(screen=out)

    def screenshot(self, req, context):
        ph = self._device(req.device_id, req.display_id)
        if req.max_side < 0:
            raise invalid("max_side %d is negative" % req.max_side)
        if not 0 <= req.quality <= 100:
            raise invalid("quality %d is outside 0..100" % req.quality)
        if req.format not in (pb.IMAGE_FORMAT_UNSPECIFIED, pb.IMAGE_FORMAT_PNG, pb.IMAGE_FORMAT_JPEG):
            raise invalid("unknown image format %d" % req.format)
        fmt = pb.IMAGE_FORMAT_JPEG if req.format == pb.IMAGE_FORMAT_JPEG else pb.IMAGE_FORMAT_PNG
        data, w, h = ph.image("JPEG" if fmt == pb.IMAGE_FORMAT_JPEG else "PNG", req.max_side, req.quality)
        return pb.ScreenshotResponse(image=pb.Image(format=fmt, width=w, height=h, data=data))

    def act(self, req, context):
        ph = self._device(req.device_id, req.display_id)
        kind = req.WhichOneof("action")
        if kind is None:
            raise invalid("the request has no action")
        a = getattr(req, kind)
        detail = ""
        if kind in ("tap", "double_tap"):
            p = self._point(a.point if a.HasField("point") else None, kind + ".point")
            detail = ph.tap(p.x, p.y)
            if kind == "double_tap" and not detail:
                ph.tap(p.x, p.y)
        elif kind == "long_press":
            p = self._point(a.point if a.HasField("point") else None, "long_press.point")
            _duration(a.duration_ms, "long_press")
            detail = "long press at (%d, %d): nothing on this phone reacts to it" % (p.x, p.y)
        elif kind == "swipe":
            src = self._point(getattr(a, "from") if a.HasField("from") else None, "swipe.from")
            dst = self._point(a.to if a.HasField("to") else None, "swipe.to")
            _duration(a.duration_ms, "swipe")
            detail = "swipe (%d, %d) → (%d, %d): nothing on this phone scrolls" % (src.x, src.y, dst.x, dst.y)
        elif kind == "scroll":
            if a.direction not in (pb.SCROLL_DIRECTION_UP, pb.SCROLL_DIRECTION_DOWN, pb.SCROLL_DIRECTION_LEFT, pb.SCROLL_DIRECTION_RIGHT):
                raise invalid("scroll.direction is required")
            if a.HasField("point"):
                self._point(a.point, "scroll.point")
            if not 0 <= a.amount_permille <= 1000:
                raise invalid("scroll.amount_permille %d is outside 0..1000" % a.amount_permille)
            detail = "nothing on this phone scrolls"
        elif kind == "type_text":
            # SPEC.md counts characters as Unicode code points, which is
            # what len() of a Python str counts.
            if not 1 <= len(a.text) <= 4096:
                raise invalid("type_text.text has %d characters; want 1 to 4096" % len(a.text))
            if not ph.type_text(a.text, a.replace, a.submit):
                raise DriverError("NO_FOCUSED_FIELD", "no text field has the focus: tap the field first")
        elif kind == "press_key":
            name = pb.Key.Name(a.key) if a.key in pb.Key.values() else ""
            if not name or a.key == pb.KEY_UNSPECIFIED:
                raise invalid("press_key.key %d is not a key of the contract" % a.key)
            if not ph.key(name):
                raise DriverError("UNSUPPORTED", "this phone has no %s key" % name)
        elif kind in ("launch_app", "stop_app"):
            if not 1 <= len(a.app_id.encode()) <= 256:
                raise invalid("%s.app_id has %d bytes; want 1 to 256" % (kind, len(a.app_id.encode())))
            ok = ph.launch(a.app_id) if kind == "launch_app" else ph.stop(a.app_id)
            if not ok:
                raise DriverError("APP_NOT_FOUND", "app %r is not installed; installed: %s" % (a.app_id, ", ".join(sorted(vphone.APPS))))
        elif kind == "open_url":
            if not a.url:
                raise invalid("open_url.url is required")
            if len(a.url.encode()) > 8192:
                raise invalid("open_url.url has %d bytes; want at most 8192" % len(a.url.encode()))
            if not ABSOLUTE_URL.match(a.url):
                raise invalid("open_url.url %r is not an absolute URL (scheme:rest)" % a.url[:80])
            detail = "this phone has no browser: the URL was not opened"
        else:
            raise DriverError("UNSUPPORTED", "action %s is not served" % kind)
        return pb.ActResponse(detail=detail)

    def wait_idle(self, req, context):
        self._device(req.device_id)
        if not 1 <= req.timeout_ms <= 30000:
            raise invalid("timeout_ms %d is outside 1..30000" % req.timeout_ms)
        # The phone changes only when it is told to, and at once.
        return pb.WaitIdleResponse(idle=True)

    def list_apps(self, req, context):
        self._device(req.device_id)
        return pb.ListAppsResponse(apps=[pb.App(id=i, label=l, version=VERSION, system=i == vphone.LAUNCHER) for i, l in sorted(vphone.APPS.items())])

    def handlers(self):
        """handlers is the generic handler that grpcio serves for DriverService."""
        unary = {"GetInfo": (self.get_info, pb.GetInfoRequest, pb.GetInfoResponse),
                 "GetScreen": (self.get_screen, pb.GetScreenRequest, pb.GetScreenResponse),
                 "Screenshot": (self.screenshot, pb.ScreenshotRequest, pb.ScreenshotResponse),
                 "Act": (self.act, pb.ActRequest, pb.ActResponse),
                 "WaitIdle": (self.wait_idle, pb.WaitIdleRequest, pb.WaitIdleResponse),
                 "ListApps": (self.list_apps, pb.ListAppsRequest, pb.ListAppsResponse)}
        methods = {name: grpc.unary_unary_rpc_method_handler(self._guard(fn), request_deserializer=req.FromString,
                                                             response_serializer=resp.SerializeToString)
                   for name, (fn, req, resp) in unary.items()}
        methods["WatchDevices"] = grpc.unary_stream_rpc_method_handler(self._guard_stream(self.watch_devices),
                                                                       request_deserializer=pb.WatchDevicesRequest.FromString,
                                                                       response_serializer=pb.WatchDevicesResponse.SerializeToString)
        return grpc.method_handlers_generic_handler("pinky.driver.v1.DriverService", methods)

    def _guard(self, fn):
        """_guard turns a DriverError into the call's status and detail, and
        any other exception into INTERNAL."""
        def call(req, context):
            try:
                return fn(req, context)
            except DriverError as e:
                abort(context, e)
            except Exception as e:  # a bug of the driver
                self.log("ERROR", "%s failed" % fn.__name__, error=repr(e))
                abort(context, DriverError("INTERNAL", "%s: %r" % (fn.__name__, e)))
        return call

    def _guard_stream(self, fn):
        def call(req, context):
            try:
                yield from fn(req, context)
            except DriverError as e:
                abort(context, e)
        return call


def _duration(ms, what):
    if not 0 <= ms <= 10000:
        raise invalid("%s.duration_ms %d is outside 0..10000" % (what, ms))
