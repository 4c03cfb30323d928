/** The console's one style sheet (inline, admitted by the page's CSP nonce). Colours keep WCAG AA contrast. */
export const CONSOLE_STYLE = `
*,*::before,*::after{box-sizing:border-box}
body{margin:0;color:#1f2328;background:#f6f8fa;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
a{color:#0550ae}
header.top{display:flex;gap:16px;align-items:center;justify-content:space-between;flex-wrap:wrap;padding:10px 20px;background:#24292f;color:#fff}
header.top a{color:#fff}
header.top .brand{font-weight:700;text-decoration:none;font-size:1.05rem}
header.top form{margin:0}
header.top button{background:transparent;color:#fff;border:1px solid #8c959f;padding:4px 10px}
.layout{display:flex;min-height:calc(100vh - 52px)}
nav.side{width:210px;flex:none;background:#fff;border-right:1px solid #d0d7de;padding:16px 0}
nav.side h2{font-size:.75rem;text-transform:uppercase;letter-spacing:.05em;color:#57606a;margin:0 16px 8px}
nav.side ul{list-style:none;margin:0;padding:0}
nav.side a{display:block;padding:6px 16px;text-decoration:none;color:#1f2328}
nav.side a[aria-current="page"]{background:#ddf4ff;border-left:3px solid #0969da;font-weight:600}
main{flex:1;padding:24px 28px;max-width:1100px}
h1{font-size:1.5rem;margin:0 0 16px}
h2{font-size:1.15rem;margin:24px 0 8px}
table{width:100%;border-collapse:collapse;background:#fff;border:1px solid #d0d7de;margin:0 0 16px}
th,td{text-align:left;padding:8px 10px;border-bottom:1px solid #d0d7de;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
code,pre{font:13px/1.5 ui-monospace,SFMono-Regular,Menlo,monospace}
pre{background:#fff;border:1px solid #d0d7de;padding:12px;border-radius:6px;white-space:pre-wrap;word-break:break-all}
.card{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:16px 18px;margin:0 0 16px}
.field{margin:0 0 12px}
label{display:block;font-weight:600;margin:0 0 4px}
input,select,textarea{font:inherit;color:inherit;padding:6px 8px;border:1px solid #6e7781;border-radius:6px;background:#fff;width:100%;max-width:520px}
textarea{min-height:90px}
textarea.code{max-width:none;min-height:320px;font:13px/1.5 ui-monospace,SFMono-Regular,Menlo,monospace}
input[type=checkbox]{width:auto}
.hint{color:#57606a;font-size:.85rem;margin:4px 0 0}
button,.button{display:inline-block;font:inherit;font-weight:600;padding:6px 14px;border-radius:6px;border:1px solid #1a7f37;background:#1a7f37;color:#fff;cursor:pointer;text-decoration:none}
button.secondary{background:#fff;color:#1f2328;border-color:#6e7781}
button.danger{background:#fff;color:#a40e26;border-color:#a40e26}
.inline{display:inline}
.row{display:flex;gap:8px;align-items:flex-end;flex-wrap:wrap}
.error{padding:10px 12px;border-radius:6px;background:#ffebe9;border:1px solid #cf222e;color:#82071e;margin:0 0 16px}
.notice{padding:10px 12px;border-radius:6px;background:#dafbe1;border:1px solid #1a7f37;color:#0f5323;margin:0 0 16px}
.secret{font:600 14px/1.6 ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all;background:#fff8c5;padding:6px 8px;border-radius:4px}
.muted{color:#57606a}
.pager{display:flex;gap:12px;align-items:center}
details.calls{margin-top:32px}
:focus-visible{outline:3px solid #0969da;outline-offset:2px}
.skip{position:absolute;left:-999px}
.skip:focus{left:8px;top:8px;background:#fff;color:#0550ae;padding:6px;z-index:2}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:16px;margin:16px 0}
figure.chart{margin:0;background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:12px}
figure.chart svg{display:block;height:auto}
figure.chart figcaption{font-size:.9rem;margin-top:6px}
.stat .figure{font-size:1.6rem;font-weight:700;margin-right:6px}
nav.row a[aria-current="page"]{font-weight:700;text-decoration:none}
.card h2:first-child,.card input[type=hidden]:first-child+h2{margin-top:0}
button:disabled{opacity:.55;cursor:not-allowed}
form.inline+form.inline{margin-left:6px}
ul.inline-list{list-style:none;margin:0;padding:0;display:flex;gap:8px 16px;flex-wrap:wrap}
form.filters{display:grid;grid-template-columns:repeat(auto-fit,minmax(180px,1fr));gap:0 12px;align-items:end}
fieldset.plain{border:0;padding:0;margin:0;min-width:0}
fieldset.plain legend{font-size:1.15rem;font-weight:600;padding:0;margin:0 0 8px}
dl.pairs{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;margin:0}
dl.pairs dt{font-weight:600}
dl.pairs dd{margin:0}
td code{word-break:break-all}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(240px,1fr));gap:0 16px}
.center{max-width:440px;margin:64px auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:28px}
`;
