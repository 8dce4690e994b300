// Package driverhost runs Pinky's phone drivers: it finds the
// pinky-driver-<name> executables, starts each as its own process through
// go-plugin (sdk.Start), supervises it, and merges the devices every driver
// reports into one list.
//
// # Lifecycle
//
// New builds a Host from a Config; Start discovers and starts every driver
// concurrently and returns once each one is running with its devices listed
// or has failed its first start (bounded by the handshake timeout). Stop ends
// every driver process and waits for it. A driver's state moves like this:
//
//	starting ──ok──▶ running ──exit or missed deadlines──▶ restarting ──ok──▶ running
//	   │                │                                    │
//	   └──fail──▶ restarting                                 └── too many failures ──▶ failed (retried slowly)
//	                    ▲
//	Restart(name) ──────┘ (from running or failed)
//	Attach(name) ──▶ attached ──exit──▶ exited (never restarted)
//	Stop ──▶ stopped (from any state)
//
// # Crashes
//
// When a driver process exits, its devices go offline at once (one Event per
// device), calls in flight return errors wrapping sdk.ErrDriverGone, and the
// driver is started again after a backoff (Config.Backoff): the first retry
// comes quickly, each further failure doubles the wait up to a cap, and a run
// that lasts Backoff.Stable resets it. A driver that fails MaxFailures times
// within Backoff.Stable is marked failed, keeps its last stderr lines in its
// status, and is retried every Backoff.FailedRetry.
//
// Each process gets a socket folder of its own (PLUGIN_UNIX_SOCKET_DIR, mode
// 0700, under Config.SocketDir), removed once the process is gone however it
// ended; at its first start the host removes the folders that hosts no
// longer running left behind. A kill -9 leaves nothing in the temporary
// folder.
//
// # Deadlines
//
// Every call through a handle has a deadline (Config.Deadlines): reads
// 25 s, actions 30 s plus the action's own length, WaitIdle its timeout
// plus a margin, file transfers a limit on a pause in their progress
// rather than on their size. The long-lived calls (WatchDevices,
// StreamVideo, Input) have none. A call past its deadline fails with an
// error wrapping sdk.ErrTimeout, whatever the driver does with it, and is
// logged as a miss. A driver that misses Deadlines.Misses deadlines within
// Deadlines.Window (3 within 5 minutes) is restarted, with backoff, and the
// reason stays as its LastError; MaxFailures such restarts within an hour
// mark it failed, so a driver that hangs again after each restart is not
// restarted at full speed forever. A call that its own caller cancelled is
// not a miss. $PINKY_DRIVER_DEADLINES changes the deadlines
// (ParseDeadlines).
//
// # Device ids
//
// Device ids are the drivers' own ids, not namespaced: phones are known by
// their serials and UDIDs, and those do not collide between the Android,
// iOS and simulated drivers. A collision is still detected: Devices lists
// every (driver, id) pair with the device's Driver, marks the later one
// Duplicate and logs a warning, and DriverForDevice picks the online entry
// that was listed first.
//
// # Handles
//
// Driver and DriverForDevice return a handle that stays valid across
// restarts: each call goes to the process running now, and while the driver
// is down a call fails at once with an error wrapping sdk.ErrDriverGone.
//
// # Events
//
// Subscribe returns a channel of device events. The host never waits for a
// subscriber: a subscriber whose buffer is full loses events, and its next
// event is an EventResync telling it to read Devices again.
//
// # Locking
//
// One mutex, Host.mu, guards the driver table, each driver's status, the
// device table and the subscribers. It is never held across a call into a
// driver, a process start or kill, or a blocking channel operation, so there
// is no lock order to keep. The current client of each driver is also kept
// in an atomic pointer so that calls through a handle take no lock.
package driverhost
