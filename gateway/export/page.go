package export

import (
	"fmt"
	"html/template"
	"time"
)

// page is index.html. html/template escapes every value for where it
// stands, and write then makes the control characters and bidirectional
// controls left in the values visible (safetext.Text): pageSource itself
// has none, a test checks it. The only script is the page's own, which
// seeks a video when a step mark is clicked. The Content-Security-Policy
// keeps the page to its own folder: nothing is fetched from the network
// even if a value slipped through.
var page = template.Must(template.New("index.html").Funcs(template.FuncMap{
	"when":  when,
	"dur":   dur,
	"secs":  secs,
	"clock": clock,
}).Parse(pageSource))

const pageSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src 'self' file:; media-src 'self' file:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pinky history export</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem 1.5rem; color: #1b1b1b; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.25rem; margin-top: 2.5rem; border-top: 2px solid #ccc; padding-top: 1rem; }
h3 { font-size: 1.05rem; margin: 0 0 .4rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { color: #555; }
pre { background: #f4f4f4; padding: .5rem; overflow-x: auto; white-space: pre-wrap; word-break: break-word; margin: .3rem 0; }
video { max-width: 100%; max-height: 70vh; background: #000; }
.marks { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .3rem; }
.marks button { font: inherit; padding: .15rem .5rem; cursor: pointer; }
article.step { border: 1px solid #ddd; border-radius: 6px; padding: .75rem; margin: .75rem 0; }
.shots { display: flex; gap: 1rem; flex-wrap: wrap; }
.shots figure { margin: 0; } .shots img { max-width: 280px; max-height: 560px; border: 1px solid #ccc; }
.note { color: #777; font-style: italic; }
.outcome { font-weight: 600; }
.approval { border-left: 4px solid #c90; padding-left: .6rem; margin: .5rem 0; }
.approval.approved { border-color: #2a2; } .approval.denied { border-color: #c22; } .approval.expired { border-color: #888; }
</style>
</head>
<body>
<h1>Pinky history export</h1>
<p>Exported {{when .Generated}}. {{len .Tasks}} task(s).</p>
<ul>
{{- range .Tasks}}
<li><a href="#{{.Anchor}}">{{.Text}}</a> on {{.Device}}, {{when .StartedAt}}</li>
{{- end}}
</ul>
{{range .Tasks}}
<section class="task" id="{{.Anchor}}">
<h2>{{if .Text}}{{.Text}}{{else}}Task {{.ID}}{{end}}</h2>
<dl class="facts">
<dt>Task</dt><dd>{{.ID}}</dd>
<dt>Agent</dt><dd>{{.Agent}}</dd>
<dt>Device</dt><dd>{{.Device}}</dd>
{{- if .Apps}}<dt>Apps</dt><dd>{{range $i, $a := .Apps}}{{if $i}}, {{end}}{{$a}}{{end}}</dd>{{end}}
<dt>Started</dt><dd>{{when .StartedAt}}</dd>
<dt>Ended</dt><dd>{{if .EndedAt.IsZero}}still running when exported{{else}}{{when .EndedAt}}{{end}}</dd>
<dt>Outcome</dt><dd class="outcome">{{.Outcome}}</dd>
<dt>Steps</dt><dd>{{len .Steps}}</dd>
</dl>
{{- if .Video}}
{{$video := .VideoID}}
<h3>Recording</h3>
<video id="{{.VideoID}}" controls preload="metadata" src="{{.Video}}"></video>
<p class="note">Click a step to see it in the video. If the video does not play{{if eq .Codec "h265"}} (H.265 is not supported by every browser){{end}}, open <a href="{{.Video}}">{{.VideoFile}}</a> in a video player.</p>
<ol class="marks">
{{- range .Steps}}
<li><button type="button" class="step-mark" id="{{.MarkID}}" data-video="{{$video}}" data-at="{{secs .VideoAt}}" title="{{.Tool}}: {{.Outcome}}">{{clock .VideoAt}} #{{.Seq}} {{.Tool}}</button></li>
{{- end}}
</ol>
{{- else if .VideoNote}}
<p class="note">{{.VideoNote}}</p>
{{- end}}
{{- with .Approvals}}
<h3>Approvals</h3>
{{range .}}{{template "approval" .}}{{end}}
{{- end}}
<h3>Steps</h3>
{{- range .Steps}}
<article class="step" id="{{.DetailID}}">
<h3>#{{.Seq}} {{.Tool}} <span class="outcome">{{.Outcome}}</span></h3>
<p>{{when .StartedAt}}, took {{dur .Duration}}{{if .MarkID}}, at {{clock .VideoAt}} in the recording{{end}}</p>
{{- if .ArgsText}}<div>Arguments</div><pre>{{.ArgsText}}</pre>{{end}}
{{- if .Message}}<div>Message</div><pre>{{.Message}}</pre>{{end}}
{{- if .Diff}}<div>Screen</div><pre>{{.Diff}}</pre>{{end}}
{{- range .Approvals}}{{template "approval" .}}{{end}}
{{- if or .Before.URL .Before.Note .After.URL .After.Note}}
<div class="shots">
{{- with .Before}}{{if .URL}}<figure><img src="{{.URL}}" alt="before" loading="lazy"><figcaption>Before</figcaption></figure>{{else if .Note}}<p class="note">Before: {{.Note}}</p>{{end}}{{end}}
{{- with .After}}{{if .URL}}<figure><img src="{{.URL}}" alt="after" loading="lazy"><figcaption>After</figcaption></figure>{{else if .Note}}<p class="note">After: {{.Note}}</p>{{end}}{{end}}
</div>
{{- end}}
</article>
{{- else}}
<p class="note">No steps.</p>
{{- end}}
</section>
{{end}}
<script>
document.addEventListener("click", function (e) {
  var mark = e.target.closest("[data-at]");
  if (!mark) return;
  var video = document.getElementById(mark.getAttribute("data-video"));
  if (!video) return;
  video.currentTime = parseFloat(mark.getAttribute("data-at"));
  video.scrollIntoView({block: "nearest"});
});
</script>
</body>
</html>
{{define "approval"}}<div class="approval {{.Status}}">
{{- if .Summary}}<div class="summary"><strong>{{.Summary}}</strong></div>{{end}}
<div>Approval: <span class="outcome">{{.Status}}</span>{{if .DecidedBy}} by {{.DecidedBy}}{{end}}{{if not .DecidedAt.IsZero}}, {{when .DecidedAt}}{{end}}{{if .ForTask}}, for the rest of the task{{end}}</div>
<div>Asked {{when .CreatedAt}} about {{.Tool}}{{if .Target}} on {{.Target}}{{end}}{{if .Commit}} ({{.Commit}}){{end}}{{if .Rule}}, rule {{.Rule}}{{end}}</div>
{{- if .Args}}<pre>{{.Args}}</pre>{{end}}
{{- if .Reason}}<div>Reason: {{.Reason}}</div>{{end}}
{{- with .Picture}}{{if .URL}}<figure><img src="{{.URL}}" alt="the screen when the agent asked" loading="lazy"><figcaption>When the agent asked (the target framed in red)</figcaption></figure>{{else if .Note}}<p class="note">Picture: {{.Note}}</p>{{end}}{{end}}
</div>{{end}}`

// when formats a time for the person, in the local time zone.
func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.Local().Format("2006-01-02 15:04:05 MST")
}

func dur(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// secs is a place in a video in seconds, as HTMLMediaElement.currentTime
// takes it.
func secs(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return fmt.Sprintf("%.3f", d.Seconds())
}

// clock is a place in a video as a player shows it: m:ss.
func clock(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int(d / time.Second)
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
