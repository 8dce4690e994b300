// Package history records what agents did on the person's phones: the
// devices and agents seen, agent sessions, tasks, every step of a task, and
// the screenshots taken around each step, the recording of each task's
// screen, and the person's approvals.
//
// The history is the record the person trusts, so it is written before an
// agent is told that a step happened. [Store] is the small interface the
// gateway uses; [SQLite] is the real implementation, [Postgres] the one for
// a history that several machines reach, and [Memory] an in-memory one for
// tests. All three pass the same suite, in package historytest.
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
// An acting tool call writes its step twice: before the action, with the
// outcome [StepRunning], and after it with [Store.FinishStep]. The first
// write is what lets the gateway keep its promise to the person: a step is
// committed before the phone changes, or the action is not done. A step
// still running when the daemon stopped is ended by [Store.SettleSteps] at
// the next start (the gateway makes it "uncertain").
//
// # When the history cannot be written
//
// A write that fails because the history cannot be written at all (a full
// disk, a file size limit, a read-only, immutable or damaged file) fails
// with a [*WriteError], which errors.Is [ErrUnwritable] and says why in
// words for people; reads go on. [Store.Health] says whether writes work,
// since when they fail, why, what the person should do, and when they
// worked again: the next write that changes the file and works ends the
// failure. Errors about what was written (ErrExists, ErrNotFound, ErrEnded,
// ErrInvalid) say nothing about the disk and leave Health as it is. [Memory]
// fails its writes on demand ([Memory.FailWrites]) for tests.
//
// [Open] checks the file with PRAGMA quick_check before it migrates it: a
// damaged database is refused with [ErrDamaged] and a message that names
// the file and says what to do (move it away; the daemon then starts a new
// history). A database it can read but not write opens, with Health failing
// from its first write.
//
// The file is opened with SQLite's "unix-excl" VFS: the daemon's process
// holds it exclusively, and the WAL index lives in the process's memory
// rather than in a -shm file mapped by every connection. A mapped file that
// becomes unwritable (an immutable flag, a full disk under a sparse file)
// turns the next write into SIGBUS, which would kill the daemon; no -shm
// file is made or read. Another program that opens the database while the
// daemon runs gets "database is locked"; once the daemon has stopped, it
// opens it as usual.
//
// # Schema
//
// The schema is created and upgraded by numbered migrations embedded in the
// binary (migrations/NNNN_name.sql), each applied in its own transaction and
// counted in SQLite's user_version. A database written by a newer Pinky is
// refused with [ErrSchemaTooNew] rather than misread. A new migration is a new
// file with the next number; a released migration is never edited.
//
// # PostgreSQL
//
// [OpenPostgres] keeps the same rows in a PostgreSQL database (pinky daemon
// --history postgres://…). Its schema is made by the same numbered
// migrations, in PostgreSQL's dialect (pgschema/migrations, one file for
// each of SQLite's, with the same number and name), each applied in its
// own transaction under an advisory lock and recorded as a row of
// pinky_migrations; a newer schema is refused with [ErrSchemaTooNew]. Times
// are the same UTC unix milliseconds. Every write commits before it
// returns, with synchronous_commit on, so an acknowledged step survives a
// crash of the daemon or of the server. A write the server refuses for a
// reason other than what was written (read-only, out of space, permission
// revoked, unreachable) fails with a [*WriteError], as with SQLite.
// Screenshots and recordings stay files in the data folder. Errors and logs
// name the database by its URL without the password ([RedactURL]).
//
// # Screenshots
//
// [MediaWriter] saves JPEG screenshots as files under the media folder in the
// background, records them as [Media] rows and links them to their step with
// [Store.SetStepMedia]. The agent's path never waits for a disk write: when
// the writer's queue is full a screenshot is dropped and counted.
//
// # Recordings
//
// A task has at most one [Recording]: a video file in the recordings folder
// ($PINKY_HOME/recordings), named by a path relative to it such as
// "<task>.mp4". The recorder records it with [Store.PutRecording] when it
// starts and updates its duration and size as it writes. A recording's
// StartedAt is the wall time of the video's time 0, so that [Store.Task]
// places every step in the video ([Step.VideoAt]) and a viewer can seek to
// it; [TaskSummary.Recording] says whether a task has one worth showing.
//
// # Retention
//
// [Store.Prune] deletes the tasks that ended before a time, with everything
// recorded about them and the sessions left empty, in one transaction; open
// tasks stay whatever their age, and devices and agents always stay. It
// deletes no file but returns the files the deleted rows named. [PruneFiles]
// is retention as the daemon runs it: it prunes, then deletes those files,
// then sweeps the media and recordings folders for orphans, files older
// than [OrphanAge] that no row names, such as those a crash left between a
// prune's commit and its deletes. Rows go before files, so the history never
// names a file that is gone.
package history
