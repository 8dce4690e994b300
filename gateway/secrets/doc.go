// Package secrets keeps passwords and one-time codes away from agents, the
// history, logs and screenshots.
//
// It answers three questions. Is this text a one-time code (FindCodes,
// MaskCodes, Scrub)? Is this field a password or a one-time-code field
// (IsPasswordField, IsCodeField)? And what must an agent not see of a screen,
// a notification or a screenshot (MaskScreen, MaskNotification, Cover,
// CoverJPEG, CoverImage)?
//
// A one-time code is a number of 4 to 8 digits, written whole ("482913"),
// in two groups ("482 913", "4829-1357") or after a short letter prefix
// ("G-482913"), in the same sentence as a code word such as "code", "OTP",
// "验证码", "認証コード", "인증번호", "código", "Bestätigungscode", "код"
// or "رمز", and within 64 characters of it. Prices, times, dates, phone
// numbers, card endings and numbers next to "promo code" or "ZIP code" are
// not codes. Masking replaces each digit with "•" and keeps everything else,
// so "Your code is 482913" reads "Your code is ••••••": a model still sees
// that a code was there, and never which.
//
// The rules lean towards masking: a number that sits next to a code word is
// hidden even when it was something else, because a leaked code cannot be
// taken back.
package secrets
