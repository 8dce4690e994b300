"""The virtual phone: a launcher and one counter app, drawn on request.

Nothing here knows gRPC. The phone keeps its state under one lock, since the
host may call any RPC concurrently (SPEC.md section 3).
"""

import io
import threading
from dataclasses import dataclass

from PIL import Image, ImageDraw

WIDTH, HEIGHT, DPI = 360, 640, 160

LAUNCHER = "dev.pinky.pyphone.launcher"
COUNTER = "dev.pinky.pyphone.counter"
APPS = {LAUNCHER: "Launcher", COUNTER: "Counter"}


@dataclass
class Element:
    """Element is one node of the screen's tree, in screen pixels."""

    parent: int  # index of the parent in the list, -1 for a root
    cls: str
    bounds: tuple  # left, top, right, bottom
    text: str = ""
    resource_id: str = ""
    hint: str = ""
    clickable: bool = False
    editable: bool = False
    focused: bool = False
    action: str = ""  # what a tap does: "count", "focus", "open-counter"


class Phone:
    """Phone is one virtual phone, always unlocked and awake."""

    def __init__(self, device_id):
        self.device_id = device_id
        self._lock = threading.Lock()
        self._app = COUNTER
        self._count = 0
        self._field = ""
        self._focused = True

    def _elements(self):
        """_elements is the screen's tree in pre-order; call with the lock held."""
        root = Element(-1, "Frame", (0, 0, WIDTH, HEIGHT))
        if self._app == LAUNCHER:
            return [root, Element(0, "Icon", (40, 80, 140, 180), text="Counter", clickable=True, action="open-counter")]
        return [
            root,
            Element(0, "Text", (20, 40, 340, 90), text="Tapped %d times" % self._count, resource_id="counter:id/count"),
            Element(0, "Button", (100, 120, 260, 180), text="Tap me", resource_id="counter:id/tap", clickable=True, action="count"),
            Element(0, "EditText", (20, 220, 340, 280), text=self._field, hint="Say something", resource_id="counter:id/field",
                    clickable=True, editable=True, focused=self._focused, action="focus"),
        ]

    def screen(self):
        """screen is the foreground app, whether a keyboard shows, and the elements."""
        with self._lock:
            return self._app, self._app == COUNTER and self._focused, self._elements()

    def tap(self, x, y):
        """tap taps the topmost clickable element under the point; it returns
        what happened, for the reply's detail when nothing did."""
        with self._lock:
            hit = [e for e in self._elements() if e.clickable and _inside(e.bounds, x, y)]
            if not hit:
                self._focused = False
                return "nothing to tap at (%d, %d)" % (x, y)
            action = hit[-1].action
            if action == "count":
                self._count += 1
            elif action == "focus":
                self._focused = True
            elif action == "open-counter":
                self._app = COUNTER
            return ""

    def type_text(self, text, replace, submit):
        """type_text types into the focused field; it returns False when no
        field has the focus."""
        with self._lock:
            if self._app != COUNTER or not self._focused:
                return False
            self._field = text if replace else self._field + text
            if submit:
                self._field = ""
            return True

    def key(self, name):
        """key presses a key of the phone; it returns False for a key the
        phone lacks."""
        with self._lock:
            if name in ("KEY_HOME", "KEY_BACK"):
                self._app = LAUNCHER
            elif name == "KEY_DELETE":
                if self._app == COUNTER and self._focused:
                    self._field = self._field[:-1]
            elif name == "KEY_ENTER":
                if self._app == COUNTER and self._focused:
                    self._field = ""
            else:
                return False
            return True

    def launch(self, app_id):
        """launch brings an installed app to the front; False when it is not installed."""
        with self._lock:
            if app_id not in APPS:
                return False
            self._app = app_id
            return True

    def stop(self, app_id):
        """stop ends an installed app; False when it is not installed."""
        with self._lock:
            if app_id not in APPS:
                return False
            if app_id == self._app and app_id != LAUNCHER:
                self._app = LAUNCHER
            if app_id == COUNTER:
                self._count, self._field = 0, ""
            return True

    def image(self, fmt, max_side, quality):
        """image draws the screen and encodes it as "PNG" or "JPEG", the
        longer side at most max_side (0 keeps the size). It returns the
        bytes and the encoded size."""
        with self._lock:
            elements = self._elements()
        img = Image.new("RGB", (WIDTH, HEIGHT), "white")
        draw = ImageDraw.Draw(img)
        for e in elements[1:]:
            draw.rectangle(e.bounds, outline="black", fill="#dde" if e.clickable else None)
            draw.text((e.bounds[0] + 6, e.bounds[1] + 6), e.text or e.hint, fill="black")
        w, h = WIDTH, HEIGHT
        if 0 < max_side < max(w, h):
            scale = max_side / max(w, h)
            w, h = max(1, round(w * scale)), max(1, round(h * scale))
            img = img.resize((w, h))
        out = io.BytesIO()
        if fmt == "JPEG":
            img.save(out, "JPEG", quality=quality or 80)
        else:
            img.save(out, "PNG")
        return out.getvalue(), w, h


def _inside(bounds, x, y):
    left, top, right, bottom = bounds
    return left <= x < right and top <= y < bottom
