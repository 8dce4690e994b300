"""pyphone is an example Pinky driver in Python: one virtual phone.

The package speaks the pinky.driver.v1 contract from SPEC.md alone:
plugin.py is the go-plugin side (handshake line, health, controller, stdio),
errors.py puts SPEC.md's error details on the wire, phone.py is the
virtual phone, and service.py maps the DriverService RPCs onto it.
"""
