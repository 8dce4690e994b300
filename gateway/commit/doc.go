// Package commit tells whether an action an agent is about to take would
// commit something on the person's behalf (pay, buy, send, post, call,
// install, delete, change a setting…) and what kind of commitment it is.
//
// Detect looks at the action and its target element: the element's label,
// description and resource id words, its role, and its screen context — the
// dialog around it, the text of a confirmation screen, the app in front. The
// words come from tables in eleven languages (English, Simplified and
// Traditional Chinese, Japanese, Korean, Spanish, French, German,
// Portuguese, Russian and Arabic), matched after normalization that folds
// case, width forms, Latin and Cyrillic diacritics and Arabic letter
// variants, so "ENVIAR", "Envíar" and "ｓｅｎｄ" match like "enviar" and
// "send".
//
// The detector leans towards asking: a confirmation button ("OK", "Yes")
// takes the kind of the dialog it closes, and an unknown app does not make a
// "Pay" button any less a payment. It is careful with controls that only
// look like commits: a menu entry that navigates ("Send feedback",
// "Payment methods…", "Call history"), a noun in a title ("Post"), a field's
// hint, or text that cannot be touched.
//
// The tables are built once at start-up; Detect allocates little and takes
// microseconds on the largest captured screens.
package commit
