package history

// NewMediaWriterHook lets the tests slow the writer down.
var NewMediaWriterHook = newMediaWriter
