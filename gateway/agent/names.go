package agent

// The tools an agent calls, by name. They are the names of the MCP tools
// (mcpserver names its definitions with them) and the names the history
// gives the steps of their calls: an acting call's step takes the tool its
// Action carries, every other call's step the tool of its Session method.
const (
	ToolList          = "phone_list"
	ToolConnect       = "phone_connect"
	ToolRelease       = "phone_release"
	ToolObserve       = "phone_observe"
	ToolTap           = "phone_tap"
	ToolLongPress     = "phone_long_press"
	ToolSwipe         = "phone_swipe"
	ToolPinch         = "phone_pinch"
	ToolScroll        = "phone_scroll"
	ToolType          = "phone_type"
	ToolKey           = "phone_key"
	ToolApps          = "phone_apps"
	ToolLaunch        = "phone_launch"
	ToolStopApp       = "phone_stop_app"
	ToolOpenURL       = "phone_open_url"
	ToolWaitFor       = "phone_wait_for"
	ToolNotifications = "phone_notifications"
	ToolFiles         = "phone_files"
	ToolUpload        = "phone_upload"
	ToolUploadLink    = "phone_upload_link"
	ToolAskPerson     = "phone_ask_person"
	ToolApproval      = "phone_approval"
)
