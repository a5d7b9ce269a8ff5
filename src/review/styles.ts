/**
 * The review page's stylesheet, inlined with the response's nonce (the CSP allows no other
 * style). No inline `style` attributes anywhere: state is shown with classes and `hidden`.
 */
export const REVIEW_STYLES = `
:root {
  --ink: #1c2024; --muted: #5b6470; --line: #d7dce2; --paper: #ffffff; --wash: #f5f7f9;
  --accent: #1f5fbf; --accent-ink: #ffffff; --attention: #9a5b00; --attention-wash: #fff6e5;
  --danger: #b42318; --ok: #1a7f37; --focus: #ffbf47;
  color-scheme: light;
  font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: var(--ink); background: var(--wash);
}
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
[hidden] { display: none !important; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.skip-link { position: absolute; left: 1rem; top: -3rem; background: var(--paper); padding: .5rem 1rem; z-index: 10; }
.skip-link:focus { top: 1rem; }
.top { background: var(--paper); border-bottom: 1px solid var(--line); padding: 1rem 1.5rem; }
.brand { margin: 0; color: var(--muted); font-size: .85rem; letter-spacing: .02em; }
h1 { margin: .2rem 0 .4rem; font-size: 1.5rem; line-height: 1.25; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 0 0 .6rem; }
h3 { font-size: 1rem; margin: 1rem 0 .4rem; }
.status-line { margin: 0; display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.phase { font-weight: 600; padding: .1rem .6rem; border-radius: 999px; background: var(--wash); border: 1px solid var(--line); }
.phase-needs_input, .phase-plan_ready { background: var(--attention-wash); border-color: var(--attention); color: var(--attention); }
.phase-executing { background: #e8f0fd; border-color: var(--accent); color: var(--accent); }
.phase-done { background: #e9f6ec; border-color: var(--ok); color: var(--ok); }
.planner, .revisions, .variant, .cost { color: var(--muted); font-size: .9rem; }
.phase-hint { margin: .3rem 0 0; }
.connection { margin: .3rem 0 0; color: var(--danger); }
.layout { display: grid; grid-template-columns: 15rem minmax(0, 1fr) 25rem; gap: 1.25rem; padding: 1.25rem 1.5rem; align-items: start; }
.outline { position: sticky; top: 1rem; max-height: calc(100vh - 2rem); overflow: auto; background: var(--paper); border: 1px solid var(--line); border-radius: 8px; padding: .8rem 1rem; }
/* After the .outline rule, so it wins: in one column a sticky outline would cover the plan. */
@media (max-width: 1100px) { .layout { grid-template-columns: minmax(0, 1fr); } .outline { position: static; max-height: none; } }
.outline ol { list-style: none; margin: 0; padding: 0; }
.outline li { margin: .15rem 0; overflow-wrap: anywhere; }
.outline-level-2 { padding-left: .9rem; } .outline-level-3 { padding-left: 1.8rem; font-size: .92rem; } .outline-level-4 { padding-left: 2.7rem; font-size: .9rem; }
.plan-column { display: flex; flex-direction: column; gap: 1rem; min-width: 0; }
.plan { background: var(--paper); border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.5rem 1.5rem; }
.plan-meta { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: baseline; border-bottom: 1px solid var(--line); margin-bottom: 1rem; }
.plan-meta p { margin: 0 0 .6rem; color: var(--muted); font-size: .9rem; }
.edited { color: var(--attention); font-weight: 600; }
.plan-body { overflow-wrap: anywhere; }
.plan-body:focus { outline: none; }
.plan-body pre { background: var(--wash); border: 1px solid var(--line); border-radius: 6px; padding: .75rem; overflow: auto; }
.diagram-frame { display: block; width: 100%; border: 0; margin: .5rem 0; background: #fff; border-radius: 6px; }
.diagram-frame:not(.drawn) { height: 0; margin: 0; visibility: hidden; }
.plan-body code { font: .9em/1.45 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.plan-body table { border-collapse: collapse; display: block; overflow: auto; }
.plan-body th, .plan-body td { border: 1px solid var(--line); padding: .3rem .6rem; }
.plan-body blockquote { margin: 0; padding-left: 1rem; border-left: 3px solid var(--line); color: var(--muted); }
.plan-body [id] { scroll-margin-top: 1rem; }
.plan-image::before { content: "🖼 "; }
.panels { display: flex; flex-direction: column; gap: 1rem; }
.panel { background: var(--paper); border: 1px solid var(--line); border-radius: 8px; padding: 1rem; }
.panel-attention { border-color: var(--attention); box-shadow: 0 0 0 2px var(--attention-wash); }
.panel-outcome { border-color: var(--ok); }
.outcome-ended { border-color: var(--danger); }
.panel-quiet { background: transparent; }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 1rem; padding: .6rem .8rem; min-width: 0; }
fieldset.bare { border: 0; padding: 0; margin: 0; }
legend { font-weight: 600; padding: 0 .3rem; overflow-wrap: anywhere; }
.chip { display: inline-block; font-size: .75rem; font-weight: 600; text-transform: uppercase; letter-spacing: .04em; background: var(--wash); border: 1px solid var(--line); border-radius: 4px; padding: 0 .35rem; }
.option { display: grid; grid-template-columns: auto 1fr; gap: .1rem .5rem; align-items: start; margin: .35rem 0; }
.option input[type="radio"], .option input[type="checkbox"] { margin-top: .35rem; }
.option-description { display: block; color: var(--muted); font-size: .9rem; }
.option-other .other-text { grid-column: 2; }
label { display: block; font-weight: 600; margin: .6rem 0 .2rem; }
.option label { font-weight: 400; margin: 0; }
textarea, input[type="text"] { width: 100%; font: inherit; padding: .45rem .55rem; border: 1px solid #9aa4b0; border-radius: 6px; background: var(--paper); color: var(--ink); }
#plan-editor { font: .9rem/1.45 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
button { font: inherit; cursor: pointer; padding: .45rem .9rem; border-radius: 6px; border: 1px solid #8a95a3; background: var(--paper); color: var(--ink); margin: .5rem .5rem 0 0; }
button:hover { background: var(--wash); }
button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-ink); }
button.danger { border-color: var(--danger); color: var(--danger); }
button:disabled, fieldset:disabled button { opacity: .55; cursor: not-allowed; }
button[aria-busy="true"] { opacity: .7; cursor: progress; }
.actions { display: flex; flex-direction: column; align-items: flex-start; gap: .25rem; }
.actions button { margin: .25rem 0; }
.decision-jump { display: none; }
@media (max-width: 600px) {
  #decision-form .actions { position: fixed; left: 0; right: 0; bottom: 0; z-index: 15; flex-flow: row wrap; align-items: stretch; gap: .4rem .5rem; padding: .5rem .75rem calc(.5rem + env(safe-area-inset-bottom, 0px)); background: var(--paper); border-top: 2px solid var(--attention); box-shadow: 0 -2px 10px rgba(0,0,0,.15); }
  #decision-form .actions button { flex: 1 1 9rem; margin: 0; line-height: 1.25; }
  .decision-jump { display: block; flex: 1 0 100%; text-align: center; font-size: .92rem; }
  body:has(#decision-form .actions) { padding-bottom: 9rem; }
  #decision-form .form-error { scroll-margin: 1rem 0 10rem; }
}
.unavailable { color: var(--muted); font-size: .92rem; margin: .4rem 0; }
.warning { background: var(--attention-wash); border-left: 4px solid var(--attention); padding: .5rem .75rem; margin: 0 0 1rem; }
.hidden-source { color: var(--danger); }
p.hidden-source, div.hidden-source { border: 1px dashed var(--danger); border-radius: 4px; padding: .3rem .5rem; background: #fdf6f5; }
.hidden-source code, .hidden-source pre { white-space: pre-wrap; overflow-wrap: anywhere; }
.hidden-label { font-size: .8rem; font-weight: 600; text-transform: uppercase; letter-spacing: .03em; margin: 0 0 .2rem; }
td.outside-columns { border: 1px dashed var(--danger); }
.code-info { margin: .5rem 0 -.4rem; font-size: .8rem; color: var(--muted); }
.code-info.hidden-source { margin-bottom: .3rem; font-size: .85rem; color: var(--danger); }
.hidden-mark { display: inline-block; font: 600 .8em/1.3 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; color: var(--danger); background: #fdecea; border: 1px solid var(--danger); border-radius: 3px; padding: 0 .15em; margin: 0 .05em; unicode-bidi: isolate; direction: ltr; }
.hint { color: var(--muted); font-size: .9rem; margin: .3rem 0; }
.form-error { color: var(--danger); font-weight: 600; margin: .5rem 0 0; }
.form-error:empty { display: none; }
.detail { background: var(--wash); padding: .5rem .75rem; border-radius: 6px; white-space: pre-wrap; overflow-wrap: anywhere; }
.test-run { font-weight: 600; overflow-wrap: anywhere; }
.test-run-passed { color: var(--ok); }
.test-run-failed { color: var(--danger); }
details.plan-editor { margin: 0 0 .75rem; }
summary { cursor: pointer; font-weight: 600; }
.comment-list { list-style: none; padding: 0; margin: 0; }
.comment-list li { border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; margin: .5rem 0; }
.comment-list blockquote { margin: 0 0 .3rem; padding-left: .6rem; border-left: 3px solid var(--accent); color: var(--muted); white-space: pre-wrap; overflow-wrap: anywhere; max-height: 8rem; overflow: auto; }
.comment-list p { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.transcript { list-style: none; margin: 0; padding: 0; max-height: 32rem; overflow: auto; }
.entry { border-top: 1px solid var(--line); padding: .45rem 0; }
.entry-who { font-size: .75rem; font-weight: 600; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.entry-text, .entry-detail { margin: .1rem 0 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.entry-tool .entry-text { font: .88rem/1.45 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.entry-detail { font-size: .88rem; color: var(--muted); }
.tone-denied .entry-text, .tone-denied .entry-who { color: var(--danger); }
.tone-error .entry-text { color: var(--danger); }
.tone-decision .entry-text { color: var(--ok); font-weight: 600; }
.command { background: #0f1720; color: #e6edf3; border-radius: 6px; padding: .6rem .8rem; overflow: auto; }
.diff { background: var(--paper); border: 1px solid var(--line); border-radius: 6px; padding: .5rem; overflow: auto; max-height: 36rem; font: .82rem/1.4 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.diff span { display: block; white-space: pre; }
.diff-add { background: #e9f6ec; color: #0f5323; }
.diff-del { background: #fdecea; color: #8a1c12; }
.diff-hunk { color: var(--accent); }
.diff-file { font-weight: 700; }
.floating-comment { position: absolute; z-index: 20; margin: 0; box-shadow: 0 2px 8px rgba(0,0,0,.2); background: var(--accent); color: var(--accent-ink); border-color: var(--accent); }
.noscript { margin: 0 1.5rem 1.5rem; }
.group-members { margin: .4rem 0; padding-left: 1.2rem; }
.group-member { margin: .35rem 0; overflow-wrap: anywhere; }
.group-title { font-weight: 600; }
.group-meta { display: block; color: var(--muted); font-size: .88rem; }
.verdict { font-size: .8rem; font-weight: 600; text-transform: uppercase; letter-spacing: .04em; }
.verdict-chosen { color: var(--ok); } .verdict-superseded { color: var(--muted); }
.compare { display: grid; grid-auto-flow: column; grid-auto-columns: minmax(22rem, 1fr); gap: 1rem; padding: 1.25rem 1.5rem; overflow-x: auto; align-items: start; }
.compare-column { min-width: 0; }
.compare-column .plan-meta p { margin: 0 0 .4rem; }
.next-steps { margin: .4rem 0 0; padding-left: 1.2rem; font-size: .92rem; }
.next-step { margin: .15rem 0; }
.next-soon { color: var(--attention); font-weight: 600; }
.adherence { background: var(--wash); border-left: 4px solid var(--ok); padding: .5rem .75rem; overflow-wrap: anywhere; }
.adherence-off { border-left-color: var(--attention); }
.chip-off { color: var(--attention); border-color: var(--attention); }
.change-file h4 { margin: .8rem 0 .3rem; overflow-wrap: anywhere; }
.change-file:target h4 { background: var(--attention-wash); }
.history { margin-top: 1.25rem; }
.compare-form { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; margin: .4rem 0 1rem; }
.compare-form label { margin: 0; }
.revision-list { list-style: none; padding: 0; margin: 1rem 0 0; }
.revision { border-top: 1px solid var(--line); padding: .5rem 0; }
.revision-shown { background: var(--wash); }
.revision-head { margin: 0; display: flex; flex-wrap: wrap; gap: .4rem; align-items: baseline; }
.revision-head > a:first-child { font-weight: 600; }
.revision-diff-link { margin-left: auto; }
.asked { margin: .3rem 0 0 .8rem; font-size: .92rem; overflow-wrap: anywhere; }
.asked-label { margin: 0; font-weight: 600; color: var(--muted); font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; }
.asked-feedback { margin: .2rem 0; padding-left: .6rem; border-left: 3px solid var(--accent); white-space: pre-wrap; }
.asked-comments { margin: .2rem 0; padding-left: 1.2rem; }
.revision-compare { display: grid; grid-template-columns: minmax(0, 3fr) minmax(12rem, 1fr); gap: 1rem; align-items: start; margin: 1rem 0; }
@media (max-width: 60rem) { .revision-compare { grid-template-columns: minmax(0, 1fr); } }
.revision-asked { background: var(--wash); border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem; }
.revision-asked h3, .revision-diff-column h3 { margin-top: 0; }
.rev-diff-scroll { overflow: auto; max-height: 40rem; border: 1px solid var(--line); border-radius: 6px; }
.rev-diff { border-collapse: collapse; width: 100%; font: .82rem/1.4 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.rev-diff th { text-align: left; color: var(--muted); font-weight: 600; padding: .2rem .4rem; border-bottom: 1px solid var(--line); }
.rev-diff td { padding: 0 .4rem; vertical-align: top; }
.rev-diff .ln { color: var(--muted); text-align: right; user-select: none; width: 3rem; }
.rev-diff .sign { width: 1rem; user-select: none; }
.rev-diff .text { white-space: pre-wrap; overflow-wrap: anywhere; }
.rev-added { background: #e9f6ec; color: #0f5323; }
.rev-removed { background: #fdecea; color: #8a1c12; }
.rev-added ins { background: #b7e4c2; text-decoration: none; }
.rev-removed del { background: #f6c4bf; text-decoration: line-through; }
.rev-skipped td { color: var(--muted); text-align: center; background: var(--wash); }
.count-added { color: var(--ok); } .count-removed { color: var(--danger); }
.revision-text { background: var(--paper); border: 1px solid var(--line); border-radius: 6px; padding: .6rem; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 40rem; overflow: auto; font: .85rem/1.45 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
`;
