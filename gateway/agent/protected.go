package agent

import (
	"errors"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Secure screens. An app can forbid capture of its window (Android's
// FLAG_SECURE: banks, payment and streaming apps): a screenshot then shows
// its area black, while the element tree is read as on any screen. The
// driver says so (sdk.Image.Blanked), or answers SCREEN_PROTECTED when it
// can give no picture at all. Either way the agent is told in one line, the
// result carries no black picture posing as the screen, and the step's
// text in the history keeps the line; the history's own screenshot and the
// recording keep the black frames, as they keep any frame (a black frame
// gives nothing away).

// NoteScreenProtected is the code that starts the line telling the agent
// that the screenshot it asked for is blanked by the app.
const NoteScreenProtected = "screen_protected"

// screenProtectedNote is that line.
const screenProtectedNote = NoteScreenProtected + ": the app in front blocks screenshots (a secure window): the picture is black, so none is attached. " +
	"Its elements are read as usual: use them (phone_observe without screenshot, phone_tap by ref or text)."

// blankedShot reports whether a screenshot call's outcome is a picture the
// app blanked: a Blanked image, or the driver's SCREEN_PROTECTED.
func blankedShot(img *sdk.Image, err error) bool {
	if err != nil {
		return errors.Is(err, sdk.ErrScreenProtected)
	}
	return img != nil && img.Blanked
}

// protect marks obs as a read of a screen the app will not let be
// captured: the note first in its text, no screenshot.
func protect(obs *Observation) {
	obs.Protected, obs.Screenshot = true, nil
	obs.Text = screenProtectedNote + "\n" + obs.Text
}
