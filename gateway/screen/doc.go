// Package screen turns the element tree a driver reports into what an agent
// reads: a compact text view of the meaningful elements, with short refs
// ("[7] button "Send"") that stay the same across reads, and after an action
// only what changed.
//
// A Model holds one device's ref numbering. Model.Read condenses an
// sdk.Screen into a View: layout containers that only group are dropped, a
// clickable container's labels are merged into it, the keyboard becomes one
// node and the status bar's clock and battery are left out, so that two
// reads a minute apart do not differ. Diff compares two Views and Render
// picks between the diff and the whole screen.
//
// Refs are positive integers that are never reused within a Model: an
// element that disappears takes its ref with it, so an old ref can never
// silently point at a different element. The numbering does not reset when
// another app comes to the front either; an element that comes back (the
// same app, the same class, resource id and text) gets its old ref again.
//
// What an agent may not see never reaches the text: a password field shows
// only whether it is filled. All label rendering goes through one function
// (see quote) so that later masking, such as one-time codes, has one place
// to hook in.
package screen
