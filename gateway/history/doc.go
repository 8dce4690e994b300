// Package history records what agents did on the person's phones: the
// devices and agents seen, agent sessions, tasks, every step of a task, and
// the screenshots taken around each step.
//
// The history is the record the person trusts, so it is written before an
// agent is told that a step happened. [Store] is the small interface the
// gateway uses; [SQLite] is the real implementation and [Memory] an
// in-memory one for tests. Both pass the same suite, in package historytest.
//
// # Durability
//
// [Open] puts the database in WAL mode with synchronous=NORMAL. A write
// method such as [Store.AddStep] returns only after its transaction has
// committed, that is, after it has been appended to the WAL file; a crash or
// kill -9 of the daemon therefore loses no acknowledged step. The WAL is not
// synced to the disk on every commit, so a power loss or an operating system
// crash may lose the last steps acknowledged before it (never corrupting the
// database). This is the trade that keeps a step's usual cost in the agent's
// path at tens of microseconds; the occasional commit that checkpoints the WAL
// into the database, and syncs, takes a few milliseconds.
//
// # Schema
//
// The schema is created and upgraded by numbered migrations embedded in the
// binary (migrations/NNNN_name.sql), each applied in its own transaction and
// counted in SQLite's user_version. A database written by a newer Pinky is
// refused with [ErrSchemaTooNew] rather than misread. A new migration is a new
// file with the next number; a released migration is never edited.
//
// # Screenshots
//
// [MediaWriter] saves JPEG screenshots as files under the media folder in the
// background, records them as [Media] rows and links them to their step with
// [Store.SetStepMedia]. The agent's path never waits for a disk write: when
// the writer's queue is full a screenshot is dropped and counted.
package history
