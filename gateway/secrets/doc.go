// Package secrets keeps passwords and one-time codes away from agents, the
// history, logs and screenshots.
//
// It answers four questions. Is this text a one-time code (FindCodes,
// MaskCodes, Scrub)? Is this field a password or a one-time-code field
// (IsPasswordField, IsCodeField)? What must an agent not see of a screen, a
// notification or a screenshot (MaskScreen, MaskNotification, Cover,
// CoverJPEG, CoverImage)? And which notifications does a screen show
// (Notices), so that a blocked app's can be hidden whole (Options.Hide)?
//
// A one-time code is a number of 4 to 8 digits, written whole ("482913"),
// in equal groups ("482 913", "4829-1357", "48 29 13", "4 8 2 9 1 3") or
// after a short letter prefix ("G-482913"), with or without invisible
// spaces inside it ("482\u200b913"), in the same sentence as a code word
// such as "code", "OTP", "验证码", "認証コード", "인증번호", "código",
// "Bestätigungscode", "код" or "رمز", and within 64 characters of it; in a
// notification a number alone in its sentence is one too (an SMS that is
// only "482913"). A token with a digit after a password word is a password
// ("temporary password: Xk7#pq2"). Prices, times, dates, phone numbers,
// card endings and numbers next to "promo code" or "ZIP code" are not
// codes. Masking replaces each visible character but spaces with "•", so
// "Your code is 482913" reads "Your code is ••••••": a model still sees that
// a code was there, and never which.
//
// A Recall remembers, as keyed hashes and for a few minutes, the codes one
// phone showed (masked, or on a blocked app's screen that no agent sees), so
// that a copy of one that shows up elsewhere (pasted into a note) is masked
// like the code, in any spacing.
//
// The rules lean towards masking: a number that sits next to a code word is
// hidden even when it was something else, because a leaked code cannot be
// taken back.
package secrets
