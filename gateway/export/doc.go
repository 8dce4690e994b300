// Package export writes tasks from the history as a folder the person can
// keep, send or open from disk in a browser (file://), with no server, no
// network and nothing fetched from elsewhere: an index.html report, the
// step screenshots under media/, and each task's recording as <task>.mp4
// with a list of step marks that seek the video.
//
// The report shows, per task, the agent, the device, what the agent said it
// would do, when it ran and how it ended; per step the tool, its arguments
// as the history keeps them (already redacted), its outcome, message and
// screen diff, the screenshots before and after, and the approvals the
// person was asked for with their decisions. Every text is escaped by
// html/template: the history holds what agents and apps wrote, which must
// never run as markup or script in the person's browser. Control
// characters and bidirectional controls in it are shown as visible
// escapes (\x1b, ‹U+202E›; internal/safetext), so that a right-to-left
// override cannot show "$100" as "$001" or reorder a line.
//
// Element ids, for tools that drive the page: the first task's video is
// "recording" and its step marks "step-<seq>", each with data-at, the step's
// place in the video in seconds; the N-th task's (N ≥ 2) are prefixed with
// "task<N>-", as in "task2-recording" and "task2-step-3".
package export
