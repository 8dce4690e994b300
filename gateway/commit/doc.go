// Package commit tells whether an action an agent is about to take would
// commit something on the person's behalf (pay, buy, send, post, call,
// install, delete, change a setting…) and what kind of commitment it is.
//
// Detect looks at the action and its target element: the element's label,
// description and resource id, its role, and its screen context — the
// dialog around it, a message typed or a recipient filled in, an amount on
// the screen, the app in front and its category (Action.AppCategory, from
// the policy's app table). Three things decide, in this order:
//
//   - Rules of the screen's structure: a field, a list or a title that
//     cannot be touched commits nothing, a phone number link calls, a
//     price in a store buys, a generic "OK" or "Confirm" takes the kind of
//     the dialog it closes, a home screen's icons open apps.
//   - Word tables in eleven languages (English, Simplified and Traditional
//     Chinese, Japanese, Korean, Spanish, French, German, Portuguese,
//     Russian and Arabic), matched after a normalization that folds case,
//     width forms, Latin and Cyrillic diacritics and Arabic letter
//     variants. They decide what they are sure of: a label that is wholly
//     a no ("Cancel") or a look-alike ("Payment methods"), and a label that
//     starts with a verb of money, a delete, a message, a post or a call,
//     which asks even when the model sees nothing there.
//   - A learned model for the rest (model.go, features.go): a multinomial
//     logistic regression over hashed character n-grams and words of the
//     label, its role, the app's category, the label's shape and what the
//     tables found in it, trained on the real-app corpus (corpus/README.md)
//     by `make commit-model`. The screen's context adds fixed bonuses to
//     its scores. Costs are not symmetric: when the model finds it more
//     likely that a control commits nothing but gives a payment, transfer,
//     purchase, delete, message, post or call askAt or more, it asks; so
//     does it, with its likeliest kind, when "nothing" is under noneBelow
//     and some kind reaches askAt. The evidence says so with its
//     confidence. The model does not judge a row of a list on the screen
//     itself (not in a dialog or a menu): such rows show what people
//     wrote or keep, which the corpus of apps' own strings never taught
//     it; the tables judge them alone.
//
// The real-app corpus is split by app: the held-out apps (heldOut in the
// tests) are read only by TestHeldOut, which gives BENCHMARKS.md its
// figures; tuning uses cross-validation over the other apps
// (TestCrossValidation). Detect takes a few microseconds on the largest
// captured screens; the model is read once, on first use.
package commit
