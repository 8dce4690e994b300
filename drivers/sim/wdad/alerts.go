package wdad

import (
	"context"
	"net/http"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

var errNoAlert = &wdaError{http.StatusNotFound, "no such alert", "An attempt was made to operate on a modal dialog when one was not open"}

// alert is a dialog on screen: the sim shows an app's dialog screens as
// XCUIElementTypeAlert.
type alert struct {
	texts   []string
	buttons []sdk.Element
}

// findAlert reads the alert on screen, nil without one.
func (s *Server) findAlert(ctx context.Context) (*alert, error) {
	scr, err := s.screen(ctx)
	if err != nil {
		return nil, err
	}
	in := map[int]bool{}
	var a *alert
	for _, e := range scr.Elements {
		switch {
		case e.Class == typePrefix+"Alert" && a == nil:
			a = &alert{}
			in[e.ID] = true
			continue
		case !in[e.ParentID]:
			continue
		}
		in[e.ID] = true
		switch e.Class {
		case typePrefix + "StaticText":
			if t := firstNonEmpty(e.Text, e.ContentDescription); t != "" {
				a.texts = append(a.texts, t)
			}
		case typePrefix + "Button":
			a.buttons = append(a.buttons, e)
		}
	}
	return a, nil
}

func buttonLabel(e sdk.Element) string { return firstNonEmpty(e.ContentDescription, e.Text) }

// alertText answers GET /alert/text.
func (s *Server) alertText(r *request) (any, error) {
	a, err := s.findAlert(r.ctx)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, errNoAlert
	}
	return strings.Join(a.texts, "\n"), nil
}

// alertButtons answers GET /wda/alert/buttons.
func (s *Server) alertButtons(r *request) (any, error) {
	a, err := s.findAlert(r.ctx)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, errNoAlert
	}
	out := []string{}
	for _, b := range a.buttons {
		out = append(out, buttonLabel(b))
	}
	return out, nil
}

// alertAccept answers POST /alert/accept {name?}: the named button, else
// the last one, as an iOS alert puts its default action last.
func (s *Server) alertAccept(r *request) (any, error) { return nil, s.pressAlert(r, true) }

// alertDismiss answers POST /alert/dismiss {name?}: the named button, else
// the first one.
func (s *Server) alertDismiss(r *request) (any, error) { return nil, s.pressAlert(r, false) }

func (s *Server) pressAlert(r *request, accept bool) error {
	a, err := s.findAlert(r.ctx)
	if err != nil {
		return err
	}
	if a == nil {
		return errNoAlert
	}
	if len(a.buttons) == 0 {
		return &wdaError{http.StatusBadRequest, "invalid element state", "The alert has no buttons"}
	}
	b := a.buttons[0]
	if accept {
		b = a.buttons[len(a.buttons)-1]
	}
	if name, ok := r.args["name"].(string); ok && name != "" {
		found := false
		for _, e := range a.buttons {
			if buttonLabel(e) == name {
				b, found = e, true
				break
			}
		}
		if !found {
			return invalidElementState("Failed to find button with label '" + name + "' for alert")
		}
	}
	return s.gesture(r.ctx, sdk.Action{Kind: sdk.ActTap, Point: b.Bounds.Center()})
}
