package api

// Methods of the person's controls that the web console added.
const (
	// MethodInput acts on a phone the person took over (MethodTakeOver):
	// the console's mouse and keyboard. InputParams → {}.
	MethodInput = "devices.input"
	// MethodSettings returns the settings: → Settings.
	MethodSettings = "settings.get"
	// MethodSetSettings changes them: SettingsChange → Settings.
	MethodSetSettings = "settings.set"
	// MethodConsoleLink makes a one-time login link to the web console:
	// → ConsoleLink.
	MethodConsoleLink = "console.link"
	// MethodExport writes tasks' report folder: ExportParams → ExportResult.
	MethodExport = "tasks.export"
)

// InputParams is one input of the person on a phone they hold. X, Y (and
// X2, Y2 for a swipe) are in the pixels of a picture of Width by Height
// (the mirror's video, which may be smaller than the screen), or in the
// phone screen's pixels when Width and Height are 0.
type InputParams struct {
	Device     string `json:"device"`
	Kind       string `json:"kind"` // tap, long_press, swipe, type, key
	X          int    `json:"x,omitempty"`
	Y          int    `json:"y,omitempty"`
	X2         int    `json:"x2,omitempty"`
	Y2         int    `json:"y2,omitempty"`
	DurationMS int    `json:"duration_ms,omitempty"`
	Text       string `json:"text,omitempty"`
	Key        string `json:"key,omitempty"` // home, back, enter, delete, recents (app_switch)…
	Width      int    `json:"width,omitempty"`
	Height     int    `json:"height,omitempty"`
}

// ConsoleLink is a one-time login link to the web console.
type ConsoleLink struct {
	URL string `json:"url"`
}

// ExportParams names the tasks to export and the folder to write, which
// must not exist or be empty.
type ExportParams struct {
	Tasks []string `json:"tasks"`
	Dir   string   `json:"dir"`
}

// ExportResult says where the report is.
type ExportResult struct {
	Index string `json:"index"` // the report's index.html
}
