package screen

import (
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Role is a node's short, platform-neutral kind.
type Role string

// Roles. Android classes and iOS element types map onto these (see roleOf).
const (
	RoleButton   Role = "button"
	RoleText     Role = "text"
	RoleField    Role = "field"
	RolePassword Role = "password"
	RoleSwitch   Role = "switch"
	RoleCheckbox Role = "checkbox"
	RoleRadio    Role = "radio"
	RoleImage    Role = "image"
	RoleList     Role = "list"
	RoleItem     Role = "item"
	RoleTab      Role = "tab"
	RoleTabs     Role = "tabs"
	RoleLink     Role = "link"
	RoleWeb      Role = "web"
	RoleDialog   Role = "dialog"
	RoleSlider   Role = "slider"
	RoleProgress Role = "progress"
	RolePicker   Role = "picker"
	RoleMenu     Role = "menu"
	RoleKeyboard Role = "keyboard"
	RoleGroup    Role = "group"
)

// Node is one meaningful element of a View.
type Node struct {
	Ref     int
	Role    Role
	Label   string // what the element says: its text, or its description, or its children's texts merged; never a password
	Value   string // a value that is not the label (a slider's position, a field's hint is in Hint)
	Hint    string // a field's placeholder or name
	ShortID string // the short resource id of a control with no label or hint (Android "send_button")
	Bounds  sdk.Rect
	Depth   int // 0 at the top of the tree
	Parent  int // the ref of the enclosing node, 0 at the top

	Clickable     bool
	LongClickable bool
	Editable      bool
	Password      bool
	Filled        bool // a password field has content (which is never shown)
	Scrollable    bool
	Checkable     bool
	Checked       bool
	Focused       bool
	Selected      bool
	Enabled       bool
	StatusBar     bool // part of the system status bar (the notification count)

	// Element is the driver's element this node stands for. For a password
	// field its Text and Value are cleared.
	Element sdk.Element

	underList bool     // inside a list, where a changed label means another element scrolled in
	texts     []string // every string ByText may match: own text, description, hint, merged labels
}

// Center is the middle of the node's bounds, where a tap lands.
func (n Node) Center() sdk.Point { return n.Bounds.Center() }

// interactive reports whether the node does something when touched or typed into.
func (n *Node) interactive() bool {
	return n.Clickable || n.LongClickable || n.Editable || n.Scrollable || n.Checkable
}

// androidRoles maps the last part of an Android class name to a role.
var androidRoles = map[string]Role{
	"Button": RoleButton, "ImageButton": RoleButton, "MaterialButton": RoleButton,
	"AppCompatButton": RoleButton, "AppCompatImageButton": RoleButton, "FloatingActionButton": RoleButton,
	"ExtendedFloatingActionButton": RoleButton, "Chip": RoleButton,
	"TextView": RoleText, "AppCompatTextView": RoleText, "MaterialTextView": RoleText,
	"EditText": RoleField, "AutoCompleteTextView": RoleField, "TextInputEditText": RoleField,
	"AppCompatEditText": RoleField, "MultiAutoCompleteTextView": RoleField, "SearchView": RoleField,
	"ImageView": RoleImage, "AppCompatImageView": RoleImage, "ShapeableImageView": RoleImage,
	"Switch": RoleSwitch, "SwitchCompat": RoleSwitch, "SwitchMaterial": RoleSwitch,
	"MaterialSwitch": RoleSwitch, "ToggleButton": RoleSwitch,
	"CheckBox": RoleCheckbox, "AppCompatCheckBox": RoleCheckbox, "MaterialCheckBox": RoleCheckbox,
	"CheckedTextView": RoleCheckbox,
	"RadioButton":     RoleRadio, "AppCompatRadioButton": RoleRadio, "MaterialRadioButton": RoleRadio,
	"RecyclerView": RoleList, "ListView": RoleList, "GridView": RoleList, "ScrollView": RoleList,
	"HorizontalScrollView": RoleList, "NestedScrollView": RoleList, "ViewPager": RoleList,
	"ViewPager2": RoleList, "ExpandableListView": RoleList, "AbsListView": RoleList,
	"SeekBar": RoleSlider, "RatingBar": RoleSlider, "AppCompatSeekBar": RoleSlider, "Slider": RoleSlider,
	"ProgressBar": RoleProgress,
	"Spinner":     RolePicker, "AppCompatSpinner": RolePicker, "NumberPicker": RolePicker,
	"DatePicker": RolePicker, "TimePicker": RolePicker,
	"WebView":   RoleWeb,
	"TabWidget": RoleTabs, "TabLayout": RoleTabs, "TabView": RoleTab, "TabLayout$TabView": RoleTab,
	"BottomNavigationView": RoleTabs, "NavigationBarView": RoleTabs, "BottomNavigationItemView": RoleTab,
	"NavigationBarItemView": RoleTab,
}

// iosRoles maps an XCUIElementType without its prefix to a role.
var iosRoles = map[string]Role{
	"Button": RoleButton, "Icon": RoleButton, "MenuButton": RoleButton, "PopUpButton": RoleButton,
	"StaticText": RoleText,
	"TextField":  RoleField, "SearchField": RoleField, "TextView": RoleField,
	"SecureTextField": RolePassword,
	"Switch":          RoleSwitch, "Toggle": RoleSwitch, "CheckBox": RoleCheckbox, "RadioButton": RoleRadio,
	"Cell": RoleItem, "MenuItem": RoleItem,
	"Table": RoleList, "CollectionView": RoleList, "ScrollView": RoleList, "Outline": RoleList,
	"Link":    RoleLink,
	"WebView": RoleWeb,
	"Alert":   RoleDialog, "Sheet": RoleDialog, "Dialog": RoleDialog,
	"Image":  RoleImage,
	"Slider": RoleSlider, "Stepper": RoleSlider,
	"ProgressIndicator": RoleProgress, "ActivityIndicator": RoleProgress,
	"PickerWheel": RolePicker, "Picker": RolePicker, "DatePicker": RolePicker,
	"TabBar": RoleTabs, "SegmentedControl": RoleTabs, "Tab": RoleTab, "TabGroup": RoleTabs,
	"Menu": RoleMenu, "MenuBar": RoleMenu,
	"Keyboard": RoleKeyboard,
}

// classRole is the role a class names, or "" for a generic container
// (FrameLayout, View, XCUIElementTypeOther…).
func classRole(class string) Role {
	if k, ok := strings.CutPrefix(class, "XCUIElementType"); ok {
		return iosRoles[k]
	}
	if k, ok := strings.CutPrefix(class, "UIA"); ok { // older WebDriverAgent
		return iosRoles[k]
	}
	short := class
	if i := strings.LastIndexByte(short, '.'); i >= 0 {
		short = short[i+1:]
	}
	if r, ok := androidRoles[short]; ok {
		return r
	}
	if strings.Contains(short, "Dialog") {
		return RoleDialog
	}
	return ""
}

// roleOf picks a node's role from its class, adjusted by its flags, falling
// back on what the element does when the class says nothing.
func roleOf(e *sdk.Element, inList bool) Role {
	r := classRole(e.Class)
	switch {
	case strings.HasSuffix(e.ResourceID, ":id/parentPanel"): // AlertDialog's frame
		return RoleDialog
	case e.Password:
		return RolePassword
	case e.Editable && r != RoleField:
		return RoleField
	}
	switch r {
	case "":
		switch {
		case e.Checkable:
			return RoleCheckbox
		case e.Scrollable:
			return RoleList
		case e.Clickable || e.LongClickable:
			if inList {
				return RoleItem
			}
			return RoleButton
		case e.Text != "" || e.ContentDescription != "":
			return RoleText
		}
		return RoleGroup
	case RoleText, RoleImage:
		if e.Clickable {
			return RoleButton
		}
	case RoleField:
		if !e.Editable && !e.Clickable && !e.Focusable && strings.HasSuffix(e.Class, "TextView") {
			return RoleText // XCUIElementTypeTextView that only shows text
		}
	}
	return r
}
