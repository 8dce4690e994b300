package commit

import "strings"

// appClass is what the app in front says about a control's meaning.
type appClass int

const (
	appOther     appClass = iota
	appSettings           // system settings, quick settings, permission controller
	appStore              // app stores: "Get" and "Update" install
	appMoney              // banks, wallets and payment apps: "Send" moves money
	appMessaging          // chat, SMS and mail: a submitted field sends
	appSocial             // social networks: a submitted field posts
	appDialer             // the phone app
	appLauncher           // the home screen: its icons open apps
)

// knownApps are well-known Android package ids and iOS bundle ids. The
// policy's editable app table is the place for the full list; these are
// only what detection needs to read a control.
var knownApps = map[string]appClass{
	"com.android.settings": appSettings, "com.apple.Preferences": appSettings,
	"com.google.android.permissioncontroller": appSettings, "com.android.permissioncontroller": appSettings,
	"com.android.systemui": appSettings, "com.samsung.android.settings": appSettings,
	"com.android.phone": appSettings, "com.apple.springboard.controlcenter": appSettings,

	"com.android.vending": appStore, "com.apple.AppStore": appStore, "com.sec.android.app.samsungapps": appStore,
	"com.huawei.appmarket": appStore, "com.xiaomi.market": appStore, "com.amazon.venezia": appStore,
	"com.tencent.android.qqdownloader": appStore, "org.fdroid.fdroid": appStore,

	"com.paypal.android.p2pmobile": appMoney, "com.venmo": appMoney, "com.squareup.cash": appMoney,
	"com.zellepay.zelle": appMoney, "com.revolut.revolut": appMoney, "com.transferwise.android": appMoney,
	"com.google.android.apps.walletnfcrel": appMoney, "com.google.android.apps.nbu.paisa.user": appMoney,
	"com.eg.android.AlipayGphone": appMoney, "jp.ne.paypay.android.app": appMoney, "com.nu.production": appMoney,
	"com.mercadopago.wallet": appMoney, "ru.sberbankmobile": appMoney, "com.idamob.tinkoff.android": appMoney,
	"com.kakaopay.app": appMoney, "viva.republica.toss": appMoney, "com.chase.sig.android": appMoney,
	"com.wf.wellsfargomobile": appMoney, "com.infonow.bofa": appMoney, "com.apple.Passbook": appMoney,

	"com.google.android.apps.messaging": appMessaging, "com.apple.MobileSMS": appMessaging,
	"com.whatsapp": appMessaging, "com.whatsapp.w4b": appMessaging, "net.whatsapp.WhatsApp": appMessaging,
	"org.telegram.messenger": appMessaging, "ph.telegra.Telegraph": appMessaging, "com.facebook.orca": appMessaging,
	"jp.naver.line.android": appMessaging, "com.kakao.talk": appMessaging, "com.tencent.mm": appMessaging,
	"com.viber.voip": appMessaging, "org.thoughtcrime.securesms": appMessaging, "com.discord": appMessaging,
	"com.Slack": appMessaging, "com.google.android.gm": appMessaging, "com.apple.mobilemail": appMessaging,
	"com.microsoft.teams": appMessaging, "com.samsung.android.messaging": appMessaging, "com.tencent.mobileqq": appMessaging,

	"com.twitter.android": appSocial, "com.atebits.Tweetie2": appSocial, "com.instagram.android": appSocial,
	"com.burbn.instagram": appSocial, "com.facebook.katana": appSocial, "com.facebook.Facebook": appSocial,
	"com.zhiliaoapp.musically": appSocial, "com.ss.android.ugc.aweme": appSocial, "com.reddit.frontpage": appSocial,
	"com.linkedin.android": appSocial, "com.sina.weibo": appSocial, "com.xingin.xhs": appSocial,
	"com.vkontakte.android": appSocial, "com.threads.android": appSocial, "com.instagram.barcelona": appSocial,
	"xyz.blueskyweb.app": appSocial, "org.joinmastodon.android": appSocial,

	"com.google.android.dialer": appDialer, "com.android.dialer": appDialer, "com.samsung.android.dialer": appDialer,
	"com.apple.mobilephone": appDialer, "com.android.incallui": appDialer,

	"com.google.android.apps.nexuslauncher": appLauncher, "com.android.launcher3": appLauncher,
	"com.sec.android.app.launcher": appLauncher, "com.apple.springboard": appLauncher,
	"com.miui.home": appLauncher, "com.huawei.android.launcher": appLauncher, "app.lawnchair": appLauncher,
}

// categories maps the app categories that Detect is told (Action.AppCategory)
// onto app classes: the policy's app table's categories and the real-app
// corpus's (corpus/README.md). The corpus's other categories (maps, notes,
// shopping…) are appOther, because the gateway cannot tell them: the model
// learns only from what it will be given.
var categories = map[string]appClass{
	// The policy's app table.
	"banking": appMoney, "payments": appMoney, "wallets": appMoney,
	"email": appMessaging, "messaging": appMessaging, "social": appSocial, "stores": appStore,
	// The corpus.
	"money": appMoney, "mail": appMessaging, "store": appStore, "settings": appSettings, "phone": appDialer,
	"launcher": appLauncher,
}

// IsCategory reports whether name is an app category that Detect reads
// from Action.AppCategory: one of the policy's app table or of the
// real-app corpus.
func IsCategory(name string) bool {
	if _, ok := categories[name]; ok {
		return true
	}
	switch name {
	case "password_managers", "authenticators", "health", "shopping", "browser", "maps", "media", "files", "notes",
		"calendar", "contacts", "camera", "gallery", "tools", "travel", "food", "news", "reader", "keyboard",
		"other":
		return true
	}
	return false
}

// appOf is the class of the app in front: its category when one is given
// and says more than "other", else what its id says.
func appOf(category, id string) appClass {
	if c, ok := categories[category]; ok {
		return c
	}
	return classify(id)
}

// classify says what kind of app id is, from the table and then from words
// in the id.
func classify(id string) appClass {
	if id == "" {
		return appOther
	}
	if c, ok := knownApps[id]; ok {
		return c
	}
	l := strings.ToLower(id)
	switch {
	case strings.Contains(l, "settings") || strings.Contains(l, "permissioncontroller"):
		return appSettings
	case strings.Contains(l, "bank") || strings.Contains(l, "wallet") || strings.Contains(l, "paypal") ||
		strings.Contains(l, "venmo") || strings.Contains(l, ".pay") || strings.Contains(l, "pay."):
		return appMoney
	case strings.Contains(l, "dialer") || strings.HasSuffix(l, ".phone"):
		return appDialer
	case strings.Contains(l, "launcher"):
		return appLauncher
	case strings.Contains(l, "messag") || strings.Contains(l, "messenger") || strings.Contains(l, ".sms") || strings.Contains(l, ".mail"):
		return appMessaging
	}
	return appOther
}
