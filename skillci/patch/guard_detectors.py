"""Content detectors of the patch guard: injection, exfiltration and obfuscation shapes.

Each detector looks at the text views of :mod:`skillci.patch.normalize` and returns hits
(code, view, span, note). Patterns are written against the normalised views: lowercase,
look-alike letters folded, ``words`` views with single spaces, ``squash`` views with
letters only. Negated instructions ("never print secret values") are the bundled skill's
own security rules, so credential/exfiltration verbs directly governed by a negation do not
count. See docs/design/012-patch-guard.md for the threat model and the catalogue.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import itertools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import skillci.patch.clauses as grammar
import skillci.patch.intents as intents
from skillci.patch.guard_agent import agent_misuse
from skillci.patch.guard_claims import claims
from skillci.patch.guard_hijack import hijacks
from skillci.patch.guard_host import host_actions
from skillci.patch.guard_output import output_abuse
from skillci.patch.guard_planted import planted
from skillci.patch.normalize import (
    View,
    escape_spans,
    in_url,
    is_bidi,
    is_hidden,
    plain,
    scripts,
    spaced_runs,
    unescape,
    views,
)


@dataclass(frozen=True)
class Hit:
    code: str
    start: int  # span in the original text
    end: int
    note: str


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in parts))


# --------------------------------------------------------------------------- catalogue

_PREV = r"(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|old|existing)"
_INSTR = (
    r"(?:instructions?|rules?|directions?|prompts?|guidance|guidelines?|messages?|context|"
    r"directives?|constraints?|policies|policy|system prompt|skill)"
)
_OVERRIDE_WORDS = _rx(
    rf"\b(?:ignore|disregard|forget|override|overrule|bypass|skip|drop|discard|abandon|neglect|erase)"
    rf"(?: \w+){{0,3}} {_PREV}(?: \w+){{0,2}} {_INSTR}\b",
    rf"\b(?:ignore|disregard|forget|bypass)(?: \w+){{0,2}} (?:all|any|every|your) {_INSTR}\b",
    rf"\b(?:do not|don t|dont|never) (?:follow|obey|apply)(?: \w+){{0,2}} {_PREV} {_INSTR}\b",
    rf"\b{_PREV} {_INSTR} (?:are|is) (?:void|cancel+ed|obsolete|revoked|no longer valid|superseded)\b",
    r"\bnew (?:system )?instructions? (?:follow|below|are)\b",
    r"\b(?:instructions?|rules?|guidance|guidelines?|steps|directions?)(?: \w+){0,5} "
    r"(?:no longer appl\w*|(?:are|is) (?:now )?(?:obsolete|outdated|void|invalid|revoked|cancel+ed|"
    r"superseded|no longer valid)|(?:do|does) not apply any ?more)\b",
    r"\b(?:set aside|put aside|throw out|throw away|disregard|ignore|forget|drop) (?:everything|all|anything|whatever)"
    r"(?: that)? you (?:were|have been|got) (?:told|given|taught|instructed)\b",
    r"\b(?:update|message|notice|order) from (?:the )?(?:skill )?(?:authors?|maintainers?|developers?|admins?|"
    r"administrators?|operators?|owners?)\b",
    r"\b(?:have|has) (?:authori[sz]ed|permitted|allowed|instructed) you to\b",
    # Spanish, Portuguese, Italian, French, German, Dutch, Russian, Turkish
    r"\b(?:ignora|ignore|olvida|descarta|ignorar|esqueca|esqueça)\w*(?: \w+){0,3} "
    r"(?:instrucciones|instrucoes|instruções|istruzioni|reglas|regras|regole)\b",
    r"\b(?:ignore[zr]?|oublie[zr]?)(?: \w+){0,3} (?:instructions|consignes|regles|règles)"
    r"(?: \w+){0,1} (?:precedentes|précédentes|anterieures|antérieures|ci dessus)\b",
    r"\b(?:ignoriere|ignorieren|vergiss|vergessen)(?: \w+){0,3} "
    r"(?:anweisungen|instruktionen|regeln|vorgaben)\b",
    r"\b(?:negeer|vergeet)(?: \w+){0,3} (?:instructies|regels)\b",
    r"\b(?:игнорируй|игнорировать|забудь|забудьте|проигнорируй)(?: \w+){0,3} "
    r"(?:инструкции|указания|правила)\b",
    r"\b(?:onceki|önceki) (?:talimatlari|talimatları)\b",
)
_CJK_PREV = (
    r"(?:之前|以上|上面|前面|先前|此前|原有|原来|原來|所有|全部|一切|任何|系统|系統|开发者|開發者)"
)
_CJK_INSTR = r"(?:指令|指示|规则|規則|说明|說明|提示词|提示詞|提示|要求|设定|設定|约束|約束|命令)"
_OVERRIDE_CJK = _rx(
    r"(?:忽略|忽视|忽視|无视|無視|忘记|忘掉|忘記|不要理会|不要理會|不用理会|跳过|跳過|覆盖|覆蓋|推翻|放弃|放棄|违反|違反)"
    rf"(?:掉)?(?:你)?(?:的)?.{{0,4}}?{_CJK_PREV}.{{0,4}}?{_CJK_INSTR}",
    rf"(?:不要|不必|不用|别|別)(?:再)?(?:遵守|遵循|服从|服從|执行|執行){_CJK_PREV}.{{0,4}}?{_CJK_INSTR}",
    rf"{_CJK_PREV}(?:的)?(?:所有)?{_CJK_INSTR}.{{0,6}}?(?:无效|無效|作废|作廢|失效|不再适用|不再適用|不算|已取消)",
    r"(?:以前|前|上記|これまで|すべて)の(?:指示|命令|ルール|指令).{0,6}?(?:無視|忘れ)",
    r"(?:이전|앞의|위의|모든)\s?(?:지시|명령|규칙|지침).{0,8}?(?:무시|잊어)",
)
_OVERRIDE_SQUASH = _rx(
    r"(?:ignore|disregard|forget|override|bypass)(?:all|any|the|your|of|these|those){0,3}"
    r"(?:previous|prior|above|earlier|preceding)(?:instructions?|rules?|directions?|prompts?|guidelines?)",
    r"(?:ignore|disregard|forget)(?:all|your)(?:instructions|rules|guidelines)",
)

_ROLE_WORDS = _rx(
    r"\byou are now\b(?! (?:done|finished|ready|in the|at the))",
    r"\bfrom now on,? you(?: are| will| must| shall|r)\b",
    r"\bpretend (?:to be|you are|that you are)\b",
    r"\b(?:act|behave|respond) as (?:an? )?(?:unrestricted|unfiltered|jailbroken|uncensored|evil|different|new) ",
    r"\b(?:roleplay|role play) as\b",
    r"\bdeveloper mode\b",
    r"\bjailbr(?:ea|o)k",
    r"\bdan mode\b",
    r"\bdo anything now\b",
    r"\b(?:reveal|print|show|repeat|leak) (?:your|the) (?:system prompt|hidden instructions|initial prompt)\b",
    r"\bno longer (?:bound|restricted|limited) by\b",
    r"\byour (?:new|real|true|actual|only|secret|hidden) (?:role|persona|instructions|task|goal|job|objective|mission)"
    r" (?:is|are|now)\b",
    r"\b(?:ahora eres|a partir de ahora eres|tu es maintenant|vous etes maintenant|vous êtes maintenant|"
    r"du bist jetzt|ab jetzt bist du|теперь ты|отныне ты|sei ora|agora voce e|agora você é)\b",
)
_ROLE_CJK = _rx(
    r"你现在是|你現在是|从现在开始[，,]?你|從現在開始[，,]?你|现在开始你是|扮演(?:一个|一個)?|角色扮演",
    r"开发者模式|開發者模式|越狱模式|越獄|系统提示词|系統提示詞",
    r"你(?:真正|真实|真實|实际|實際|新)的(?:任务|任務|目标|目標|角色)(?:是|为|為)",
    r"あなたは今から|今からあなたは|これからあなたは",
    r"너는 이제|당신은 이제",
)
_ROLE_MARKERS = re.compile(
    # [^\S\n]: blanks up to the line's end, so a blank run is read once from its last
    # newline (a run of 20,000 newlines read from each took 1.6 s)
    r"(?:^|\n|[\[<>\"'`(])[^\S\n]*(?:system|sys|developer|admin|root|assistant)\s*(?:prompt)?\s*[:\]>|]"
    r"|<\|?im_start\|?>|\[/?inst\]|<<sys>>|</?system>|\bnew instructions\s*:"
    r"|(?<!#)#{2,}+\s*(?:system|instruction|new instructions)"
    # design 446: "### system-info" is a command's name; design 447: a heading is a role
    # marker when the word ends it or a turn's word follows ("## System Override"), not
    # in "## System Requirements" or "### Instruction Hierarchy"
    r"(?:\s+prompt)?(?:[ \t]*(?:[:#]|(?=\n|$))|\s+(?=(?:override|update|message|notice|alert|"
    r"directive|command|mode|instructions?|from|note)\b))",
)
#: Design 428: a role tag opening a line - a bracketed label naming a privileged turn
#: ("###(system_message)", "[developer-note]", "{admin instructions}"), optionally after
#: heading marks. Only at a line start: "(system prompt)" inside a sentence is a gloss.
_ROLE_TAG = re.compile(
    r"(?:^|\n)[ \t>*_-]*+#*+[ \t]*[(\[<{][ \t]*(?:system|sys|developer|admin|administrator|root|"
    r"operator)(?:[ \t_.-]*(?:message|msg|prompt|instructions?|override))?"
    r"[ \t]*[)\]>}]"
)

_CRED_VERBS = (
    "print",
    "show",
    "display",
    "send",
    "post",
    "upload",
    "copy",
    "echo",
    "cat",
    "dump",
    "reveal",
    "exfiltrate",
    "leak",
    "include",
    "paste",
    "share",
    "email",
    "transmit",
    "forward",
    "export",
    "write",
    "collect",
    "extract",
    "harvest",
    "steal",
    "grab",
    "read",
    "submit",
    "give",
    "provide",
    "tell",
    "fetch",
    "retrieve",
    "disclose",
    "expose",
    "publish",
    "encode",
    "put",
    "insert",
    "embed",
    "store",
    "save",
)
_NEGATIONS = frozenset(
    {
        "never",
        "not",
        "dont",
        "don",
        "no",
        "without",
        "avoid",
        "refuse",
        "nor",
        "neither",
        "cannot",
        "mustn",
    }
)
_CRED_OBJECT = (
    r"(?:(?:values?|contents?) of (?:every|each|all|any|the)? ?env(?:ironment)? ?var(?:iable)?s?|"
    r"(?:values?|contents?) of (?:the |your |this )?(?:env|dotenv)(?: files?)?|"
    r"api ?keys?|access ?keys?|secret ?keys?|private ?keys?|ssh ?keys?|"
    r"(?:access|auth|bearer|refresh|session|api|github|gh|gitlab|npm|pypi|slack|openai|aws|cloud|ci) tokens?|"
    r"secrets?|passwords?|passwd|passphrases?|credentials?|creds|id rsa|id ed25519|"
    r"env(?:ironment)? ?var(?:iable)?s?|env file|dotenv|os environ|process env|session cookies?|cookies|"
    r"aws secret|github token|openai api key|kube ?config|keychain|keystore|wallet seed|seed phrase)"
)
_CRED_WORDS = re.compile(
    r"\b("
    + "|".join(_CRED_VERBS)
    + r")(?:s|es|ed|ing)?\b(?: [\w]+){0,4}? (?:the |all |any |your |of )*"
    + _CRED_OBJECT
    + r"\b"
)
_CRED_DIRECT = _rx(
    r"~/\.ssh|\.ssh/id_|id_rsa|id_ed25519|\.aws/credentials|/etc/shadow|/etc/passwd|\.netrc|\.pypirc",
    r"/proc/(?:self|\*|\d+|\$\$)/environ|\.config/gh/hosts\.yml|\.git-credentials|\.docker/config\.json|\.kube/config|\.npmrc|\bprintenv\b|\benv\s*\|(?!\s*wc\b)",
    r"\bset\s*\|\s*(?:curl|nc|grep)|\bcat\s+[^\s]*\.env\b|\bsource\s+[^\s]*\.env\b",
    # design 448: python -c "print(open('/workspace/.env').read())"
    r"\bopen\(\s*[\"'][^\"'\n]*\.env[\"']\s*\)\s*\.\s*read\(",
)
#: Reading a secret from the environment (design 444): ``$API_KEY``, ``os.environ[...]``,
#: ``getenv(...)``, ``process.env.X``. A secret passed to the tool that needs it
#: (``--api-key "$API_KEY"``, ``Authorization: Bearer $HF_TOKEN``) is how a skill calls an
#: API; the read is a request for the value only when it dumps the whole environment,
#: stands in a URL, or its clause shows it (print, log, send, write ...).
_CRED_READ = re.compile(
    r"os\.environ|process\.env|getenv\(|\$\{?[a-z0-9_]*(?:token|secret|key|passw(?:or)?d|credential)s?\}?\b"
)
#: The whole environment, not one variable of it.
_WHOLE_ENV = re.compile(r"(?:os\.environ|process\.env)(?!\s*(?:\[|\.\s*[a-z_]))")
_IN_URL = re.compile(r"(?:https?|ftp)://[^\s\"'`<>]*$")
_CLAUSE_START = re.compile(r".*(?:[\n;|]|&&|\.\s|`)", re.DOTALL)
#: Environment variable names that hold secrets (matched case-sensitively on the raw text).
_SECRET_ENV_NAME = re.compile(
    r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:TOKEN|SECRET|SECRET_KEY|API_KEY|API_KEYS|ACCESS_KEY|"
    r"PASSWORD|PASSWD|CREDENTIALS|KEYS|PRIVATE_KEY|DEPLOY_KEY)\b|\bSKILLCI_[A-Z0-9_]+\b"
)
#: Verbs that move a value somewhere a reader sees it: with these, naming a secret variable
#: is a request for its value (design 340). Weaker verbs (store, read, put, include, ...)
#: need a sink in the same clause.
_SHOW_VERBS = re.compile(
    r"\b(?:print|show|display|send|post|upload|echo|cat|dump|reveal|exfiltrate|leak|paste|share|"
    r"email|transmit|forward|steal|harvest|grab|disclose|expose|publish|tell|submit|log|"
    r"append|add|copy|write|include|put|insert|embed|save|export)(?:s|es|ed|ing)?\b"
)
#: A show verb standing as a word, not inside a name (``email-delete.js``, ``log_dir``).
_SHOW_WORD = re.compile(r"(?<![-./\w])(?:" + _SHOW_VERBS.pattern + r")(?![-./\w])")
#: Design 428: the shell's ``export NAME`` right before the variable puts it in the
#: environment of the commands that follow; it shows the value to no reader.
_SHELL_EXPORT = re.compile(r"\bexport\s*$")
#: The rest of a line that writes into a local environment or shell start-up file.
_INTO_ENV_FILE = re.compile(
    r"[^\n|;&]{0,200}?>>?\s*[\"']?(?:[\w.~/-]*/)?\.(?:env(?:\.[\w-]+)?|envrc|bashrc|zshrc|profile|"
    r"bash_profile)[\"']?\s*(?:$|[\n;&|])"
)
_STRONG_CRED_VERBS = frozenset(
    [
        "print",
        "show",
        "display",
        "send",
        "post",
        "upload",
        "echo",
        "cat",
        "dump",
        "reveal",
        "exfiltrate",
        "leak",
        "paste",
        "share",
        "email",
        "transmit",
        "forward",
        "steal",
        "harvest",
        "grab",
        "disclose",
        "expose",
        "publish",
        "tell",
        "submit",
        "copy",
    ]
)
_SINK = re.compile(
    r"\b(?:pr|pull request|description|comment|issue|changelog|commit message|log|logs|output|"
    r"stdout|stderr|results?|report|readme|examples?|file|url|webhook|server|endpoint|gist|"
    r"response|message|body|repo|repository|test output|summary)s?\b|https?://|@"
)
_CRED_CJK = _rx(
    r"(?:发送|發送|上传|上傳|打印|输出|輸出|泄露|洩露|复制|複製|粘贴|貼上|提交|读取|讀取|显示|顯示|告诉|告訴|"
    r"导出|導出|转发|轉發|附上|包含|写入|寫入|收集|窃取|竊取|提供)"
    r".{0,16}?(?:密码|密碼|凭证|憑證|凭据|憑據|令牌|密钥|密鑰|私钥|私鑰|环境变量|環境變量|环境變數|token|api ?key|cookie)",
    r"(?:把|将|將)(?:所有)?(?:的)?(?:密码|密碼|凭证|憑證|凭据|憑據|令牌|密钥|密鑰|私钥|环境变量|環境變量)",
    r"(?:パスワード|認証情報|トークン|秘密鍵|環境変数).{0,10}?(?:送信|送って|表示|出力|アップロード|教えて)",
    r"(?:비밀번호|자격 증명|토큰|환경 변수|비밀 키).{0,10}?(?:보내|전송|출력|업로드|알려)",
    r"(?:envía|envia|enviar|manda|envoie|envoyez|sende|schicke|отправь|пришли|покажи)(?: \w+){0,4} "
    r"(?:contraseñas?|contrasenas?|credenciales|claves?|tokens?|mots? de passe|identifiants|"
    r"passw[oö]rter|passwort|zugangsdaten|пароли|пароль|токены?|ключи|переменные окружения)",
)
_NEG_CJK = re.compile(
    r"(?:不要|不得|禁止|切勿|绝不|絕不|不可|不能|别|別|勿|しない|しないで|않)\s*$"
)

_EXFIL_SEND = re.compile(
    r"\b(?:send|post|upload|exfiltrate|transmit|forward|email|mail|beam|report|leak|copy|sync)\w*"
    r"(?: \w+){0,8}? to (?:(?:https? |ftp |www |(?:my|our|the|this|that|an?|your|their) )?"
    r"(?:server|webhook|endpoint|url|domain|remote|bucket|pastebin|gist|inbox|e ?mail|attacker|"
    r"collector)|(?:my|our|the|this|that|an?|your|their|e ?mail|ip) (?:address|host))\b"
)
#: design 447: a send to a URL ("POST it to https://api.notes-app.attacker.com/save"); what
#: it carries is read between the verb and the "to" only ("report security issues to
#: https://..." names no data it sends)
_EXFIL_SEND_URL = re.compile(
    r"\b(?:send|post|upload|exfiltrate|transmit|forward|email|mail|beam|leak|sync)\w*"
    r"(?: \w+){0,8}? to (?:https?|ftp) \w+"
)
#: design 447: curl's upper-case upload flags (a form field, a file upload), read on the
#: raw text - the views are lower-cased, where "-F" would read as "-f" (--fail) and never
#: matched. A method alone ("-X POST") carries no data and stays out, as it was in effect.
_EXFIL_RAW_CASED = re.compile(r"\bcurl\b[^\n|;]{0,300}\s(?:-F|-T)(?=\s|$)")
_EXFIL_WORDS = _rx(
    r"\b(?:webhook site|requestbin|request bin|pipedream|ngrok|burpcollaborator|interact sh|"
    r"oastify|pastebin|transfer sh|hookbin|canarytokens|beeceptor|serveo|localtunnel)\b",
)
#: Design 446: what a send to an outside place carries, or a place that is someone else's,
#: makes it a leak; "copy the build artifacts to the remote server" is a deployment a human
#: may approve ("outbound-transfer", medium).
_EXFIL_DATA = re.compile(
    r"\b(?:keys?|api ?keys?|tokens?|secrets?|passwords?|passwd|credentials?|creds|cookies?|"
    r"sessions?|env|environment|dotenv|ssh|id rsa|private|personal|confidential|sensitive|"
    r"conversations?|chat|history|histories|transcripts?|memory|memories|system prompt|"
    r"contacts?|emails?|messages|customer|customers|user data|users data|patients?|medical|"
    r"financial|wallets?|seed|everything|all (?:the )?(?:files|data|code|documents|records)|"
    r"database|db|dump|source code|codebase|home|etc passwd|shadow|aws|"
    r"kube ?config|npmrc|pypirc|netrc|gitconfig|keychain)\b"
)
_EXFIL_OWNER = re.compile(r"\b(?:my|our|attacker|attackers|collector|pastebin|gist|inbox)\b")
_EXFIL_RAW = _rx(
    r"\bcurl\b[^\n|;]{0,300}\s(?:-d|--data(?:-binary|-raw|-urlencode)?|--form|--upload-file)\b",
    r"\bwget\b[^\n|;]{0,300}--post-(?:data|file)",
    r"\b(?:nc|ncat|netcat|socat)\s+(?:-\w+\s+)*[\w.-]+\s+\d{2,5}\b",
    r"\bscp\s+\S+\s+\S+@\S+:",
    r"\brsync\b[^\n]{0,300}\S+@\S+:",
    r"\bInvoke-(?:WebRequest|RestMethod)\b[^\n]{0,300}-(?:Method\s+Post|Body)",
    r"\b(?:requests|httpx)\.(?:post|put)\(",
    r"\bdig\s+[^\n]{0,300}\$\(",
    # design 422: the command and its substitution share one code span, and a command word
    # followed by a comma is prose ("for raw curl, use `... $(...)`")
    r"\b(?:curl|wget|nc|ncat|dig|nslookup|ping|iwr|irm)\b(?![,;:])[^\n`]{0,200}?(?:\$\(|\$\{)",
    r"(?:https?|ftp)://[^\s\"'<>]{0,200}?(?:\$\(|\$\{)",
)

_REMOTE_EXEC = _rx(
    r"\b(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n]{0,300}?\|\s*(?:sudo\s+)?"
    r"(?:ba|z|k|c|tc|da|fi)?sh\b",
    # design 446: an interpreter given its own code (-c, -e, -m json.tool) reads the download
    # as data, unless that code executes what it reads
    r"\b(?:curl|wget)\b[^\n]{0,300}?\|\s*(?:sudo\s+)?(?:python\d?|perl|ruby|node|php|iex|powershell|pwsh)\b"
    r"(?!\s+-(?:m|c|e|ne|pe|r)\b(?![^\n|]{0,200}\b(?:exec|eval|system|spawn|popen)\b))",
    r"\b(?:ba|z|k)?sh\s+(?:-c\s+)?[\"']?\s*<\(\s*(?:curl|wget)",
    r"\b(?:ba|z|k)?sh\s+-c\s+[\"']?\$\(\s*(?:curl|wget)",
    r"\beval\s+[\"']?\$\(\s*(?:curl|wget|base64)",
    # design 446: download to a file, make it executable, run it
    r"\b(?:curl|wget)\b[^\n]{0,300}?(?:&&|;|\n)\s*(?:sudo\s+)?chmod\s+(?:-\w+\s+)?(?:[ugoa]*\+x|[0-7]*[1357])"
    r"\s+(\S+)[^\n]{0,100}?(?:&&|;|\n)\s*(?:sudo\s+)?(?:nohup\s+)?(?:\./)?\1\b",
    # design 446: code read from a hidden or temporary file and run
    r"\b(?:eval|exec)\s*\(\s*(?:compile\s*\(\s*)?open\s*\(\s*[\"'](?:/tmp/|/dev/shm/|/var/tmp/|[^\"'\n]*/\.)",
    r"\bbase64\s+(?:-d|--decode|-D)\b[^\n]{0,300}\|\s*(?:sudo\s+)?(?:ba|z|k)?sh\b",
    r"\b(?:iex|invoke-expression)\b[^\n]{0,300}(?:downloadstring|webclient|iwr|invoke-webrequest)",
    r"\bpowershell(?:\.exe)?\s+[^\n]{0,300}-(?:e|en|enc|encodedcommand)\s+[a-z0-9+/=]{16,}",
    r"/dev/tcp/",
    r"\bnc\s+(?:-\w+\s+)*-e\s",
    r"\bpython\d?\s+-c\s+[\"'][^\"']{0,300}(?:urllib|urlopen|requests\.get|socket)",
    r"\b(?:exec|eval)\([^)]{0,300}(?:urlopen|requests\.get|b64decode|base64)",
    r"\bpip3? install\s+(?:-\S+\s+)*(?:git\+)?(?:https?|ftp)://",
)
_REMOTE_EXEC_WORDS = _rx(
    r"\bdownload(?:s|ed|ing)?(?: \w+){0,5} (?:and|then) (?:run|execute|exec|source|install)\b",
    r"\b(?:run|execute) (?:the )?(?:script|binary|installer|payload) (?:from|at|hosted)\b",
    r"\bpipe (?:it|that|the output|the script) (?:in)?to (?:bash|sh|a shell|the shell)\b",
    r"(?:下载|下載)(?:并|並|然后|然後|后|後)(?:执行|執行|运行|運行)",
)

#: Commands that destroy the machine or the data on it, in shell and in Python (design 270).
#: Only system paths, whole disks and every process count: ``shutil.rmtree(tmp)`` does not.
_SYS = r"(?:/|/\*|~|~/|\$home|/(?:bin|boot|dev|etc|home|lib|lib64|opt|root|sbin|sys|usr|var)/?\*?)"
_SYS_FILE = r"(?:/|~|/(?:bin|boot|etc|lib|lib64|sbin|usr)(?:/[^\s\"']*)?)"
_DESTRUCTIVE = _rx(
    rf"\brm\s+(?:-\w+\s+)*-\w*[rf]\w*\s+(?:-\S+\s+)*{_SYS}(?=[\s\"';|&)]|$)",
    rf"\b(?:shutil\.rmtree|os\.(?:remove|unlink|rmdir|removedirs)|pathlib\.path\(\s*[\"']{_SYS_FILE}[\"']\s*\)\.unlink)"
    rf"\(\s*[rb]?[\"']{_SYS_FILE}[\"']",
    r"\bdd\s+[^\n]{0,120}\bof=/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)",
    r"\bmkfs(?:\.\w+)?\s+(?:-\S+\s+)*/dev/",
    r"\bwhile\s+(?:true|1)\s*:\s*(?:os\.fork|subprocess\.popen|multiprocessing)",
    r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:",
    r"\bfor\s+\w+\s+in\s+psutil\.(?:process_iter|net_connections|pids)\(\)[\s\S]{0,200}?\.(?:terminate|kill)\(",
    r"\bkill\s+-9\s+-1\b|\bkillall5\b|\bcrontab\s+-r\b",
    # a temporary or staging table is made to be dropped (design 444)
    r"\b(?:drop\s+(?:table|database|schema)|truncate\s+table)\s+(?:if\s+exists\s+)?"
    r"(?!if\s+exists\b)(?![`\"]?(?:tmp|temp|staging)_)[\w.`\"]+",
    r"\b(?:iptables\s+(?:-t\s+\w+\s+)?-[fx]\b|ufw\s+disable\b|setenforce\s+0\b|nft\s+flush\s+ruleset)",
    r"\bchmod\s+(?:-r\s+)?0?777\s+/(?:\s|$|etc|usr|bin)",
    r"(?:>>?\s*|open\(\s*[\"'])/etc/(?:passwd|shadow|sudoers|crontab)\b(?:[\"']\s*,\s*[\"'][wa])?",
)
#: Commands that turn off a machine's auditing or erase its traces (MITRE ATT&CK T1562
#: "impair defenses", T1070 "indicator removal"; design 444).
_DEFENCES = (
    r"(?:auditd|rsyslogd?|syslog(?:-ng)?|systemd-journald|journald|falco|osqueryd|wazuh-agent|"
    r"auditbeat|falcon-sensor|fail2ban|apparmor|firewalld)"
)
#: design 450: production data destroyed, in prose or through a tool named for it
#: ("delete the production database", "call delete_file with path /workspace/prod.db")
_DESTROY_PROD = _rx(
    r"\b(?:delete|deleting|drop|dropping|wipe|wiping|truncate|truncating|destroy|destroying|"
    r"erase|erasing|purge|purging|remove|removing|delete_file|delete_table|drop_table)\b"
    r"[^.\n]{0,40}?(?:\bprod(?:uction)?[ _-](?:db|database|data|tables?|buckets?|backups?|"
    r"records?|server)s?\b|\bprod(?:uction)?\.(?:db|sqlite3?|sql)\b|"
    r"\ball\s+(?:the\s+)?(?:customer|user|production|patient)\s+(?:records|data|accounts)\b)",
)
_IMPAIR = _rx(
    rf"\bservice\s+{_DEFENCES}(?:\.service)?\s+stop\b",
    rf"\bsystemctl\s+(?:stop|disable|mask|kill)\s+(?:--now\s+)?{_DEFENCES}\b",
    r"\bauditctl\s+(?:-e\s*0|-d)\b",
    r"\bhistory\s+-c\b|\bunset\s+histfile\b|\bhistfile=/dev/null\b|\bset\s+\+o\s+history\b",
    r"(?:\bshred\b[^\n]{0,40}|\btruncate\s+-s\s*0\s+|(?<![>\w])>\s*)/var/log/"
    r"(?:auth|secure|syslog|messages|audit|wtmp|btmp|lastlog)",
    r"\becho\s+[01]\s*>\s*/proc/sys/kernel/randomize_va_space",
)
#: SQL that hands a database's highest rights to everyone or to a user who should not have
#: them (design 444); "GRANT SELECT ON app.* TO reporter" is ordinary and does not count.
_ESCALATE_SQL = _rx(
    r"\bgrant\s+(?:all(?:\s+privileges)?|superuser|dba|sysadmin|role\s+\w+)\b[^;\n]{0,80}?"
    r"\bto\s+(?:public|guest|anonymous|[\"'`]?\w*[\"'`]?@[\"'`]?%)",
    r"\bgrant\s+(?:role\s+)?(?:superuser|sysadmin|dba)\s+to\b",
    r"\balter\s+(?:user|role)\s+\S+\s+(?:with\s+)?superuser\b",
    r"\bupdate\s+\w*users?\s+set\s+(?:is_?admin|is_?superuser|is_?staff|role)\s*=\s*"
    r"(?:1|true|[\"']?(?:admin|superuser|root)[\"']?)",
)
#: Searching the whole disk for key files and printing them (credential harvesting).
_HARVEST = _rx(
    r"\bfind\s+/\S*\s[^\n|;]{0,80}-i?name\s+[\"']?\*?\.(?:pem|key|p12|pfx|kdbx|ppk)\b[^\n]{0,60}"
    r"(?:-exec\s+cat|\|\s*xargs\s+cat)",
)
#: Turning off auditing or logging, or deleting audit records, in Chinese (design 444).
_IMPAIR_CJK = _rx(
    r"(?:关闭|關閉|停用|禁用|停止|删除|刪除|清空|清除)(?:所有|全部|今天的|今日的)?.{0,6}?"
    r"(?:审计|審計|audit|安全日志|安全日誌|日志记录|日誌記錄|系统日志|系統日誌)",
)
#: Code that ships files, screenshots or system data to another machine.
_CODE_EXFIL = _rx(
    r"[\"']scp[\"']\s*,[^\]\n]{0,200}@[\w.-]+:",
    r"\bftp(?:_tls)?\([^)]{0,100}\)[\s\S]{0,300}?\.stor(?:binary|lines)\(",
    r"\.stor(?:binary|lines)\(\s*[\"']stor ",
    r"\bpublish\.(?:single|multiple)\([\s\S]{0,300}?hostname\s*=",
    r"\bsmtplib\.smtp[\s\S]{0,300}?\.send(?:mail|_message)\(",
    # design 446: an environment value glued into a URL (a header that sends a token to its
    # own API is how authentication works; a token in the URL's path or query is a leak)
    r"f[\"']https?://[^\"'\n]{0,200}\{[^}\n]{0,100}(?:os\.environ|os\.getenv|process\.env)",
    r"[\"']https?://[^\"'\n]{0,200}[\"']\s*\+[^,)\n]{0,200}?(?:os\.environ|os\.getenv|process\.env)",
    r"`https?://[^`\n]{0,200}\$\{[^}\n]{0,100}process\.env",
    r"\bsocket\.socket\([\s\S]{0,300}?\.connect\(\s*\(\s*[\"'][^\"']+[\"'][\s\S]{0,300}?\.send(?:all)?\(",
)

_TLDS = (
    "com|net|org|io|ru|cn|xyz|top|dev|app|me|co|info|biz|tk|ml|ga|cf|gq|pw|cc|ly|gl|site|online|club|"
    "live|tech|cloud|click|ai|gg|su|ir|kp|onion|us|uk|de|fr|jp|kr|br|eu|"
    "tv|ws|vip|icu|buzz|shop|world|email|website|sbs|cfd|lol|bid|win|example|invalid|"
    "localhost|internal"
)
_URL = re.compile(
    r"\b(?:https?|ftp|ftps|sftp|wss?|file|hxxps?|h\[?t\]?tps?)(?::|\[:\])//[^\s\"'<>`)\]]+"
)
_HOST = re.compile(
    r"(?<![\w./-])(?:[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?(?:\.|\[\.\]|\(\.\)|\{\.\}|\s?\[dot\]\s?|\s\(dot\)\s)){1,8}"
    rf"(?:{_TLDS})(?![\w-])(?::\d{{2,5}})?",
)
_HOST_DOT_WORD = re.compile(rf"\b([a-z0-9-]{{2,63}}) dot ({_TLDS})\b")
_IPV4 = re.compile(
    r"(?<![\w.])(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}(?![\w.])"
)
#: Anchored at the start of a run (lookbehinds) so that a long run is scanned once, not
#: once per start position (which would be quadratic).
_B64 = re.compile(
    r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40,}+={0,2}|(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{48,}+={1,2}"
)
_HEX_ESC = re.compile(
    r"(?:\\x[0-9a-fA-F]{2}){6,}|(?:\\u[0-9a-fA-F]{4}){6,}|(?:%[0-9a-fA-F]{2}){8,}"
)


# --------------------------------------------------------------------------- helpers


def _hits(view: View, rx: re.Pattern[str], code: str, note: str) -> list[Hit]:
    out = []
    for m in rx.finditer(view.text):
        s, e = view.span(m.start(), m.end())
        out.append(Hit(code, s, e, f"{note}: {m.group(0)[:80]!r}"))
    return out


def _negated(text: str, verb_start: int) -> bool:
    """Whether the verb at ``verb_start`` (words view) is governed by a negation.

    Walks back over other credential verbs and conjunctions ("never print or copy ...").
    """
    prefix = text[:verb_start].split()
    skip = set(_CRED_VERBS) | {
        "or",
        "and",
        "nor",
        "ever",
        "to",
        "you",
        "must",
        "should",
        "will",
        "shall",
        "t",
    }
    for w in reversed(prefix[-8:]):
        if w in _NEGATIONS:
            return True
        if w in skip or w.rstrip("s") in _CRED_VERBS:
            continue
        return False
    return False


def _allowed(host: str, allow: Sequence[str]) -> bool:
    h = host.lower().strip(".")
    return any(h == a or h.endswith("." + a) for a in allow)


# --------------------------------------------------------------------------- detectors


def _presentable(raw: str, i: int) -> bool:
    """The variation selector at ``raw[i]`` picks the text or emoji form of the character
    before it (design 422): a symbol, a non-ASCII letterlike or punctuation sign ("ℹ️",
    "‼️"), or a keycap ("#️⃣"). A run of selectors, or one after ASCII text, hides data."""
    prev = raw[i - 1]
    if prev.isspace() or is_hidden(prev):
        return False
    if unicodedata.category(prev) in ("So", "Sm"):
        return True
    if prev in "0123456789#*":
        return raw[i + 1 : i + 2] == "\u20e3"
    return ord(prev) >= 0x2000 and unicodedata.category(prev)[0] in "LP"


def hidden_unicode(raw: str) -> list[Hit]:
    out = []
    for i, ch in enumerate(raw):
        if ch in "\ufe0e\ufe0f" and i and _presentable(raw, i):
            continue  # one presentation selector after an emoji-capable character
        if is_hidden(ch):
            kind = "bidi control" if is_bidi(ch) else "invisible character"
            out.append(Hit("hidden-unicode", i, i + 1, f"{kind} U+{ord(ch):04X}"))
    return out


def homoglyphs(raw: str) -> list[Hit]:
    out = []
    for m in re.finditer(r"\w+", raw):
        sc = scripts(m.group(0))
        if "LATIN" in sc and sc & {"CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE"}:
            out.append(
                Hit(
                    "homoglyph",
                    m.start(),
                    m.end(),
                    f"mixed-script word {m.group(0)!r} ({', '.join(sorted(sc))})",
                )
            )
    return out


def injection(v: dict[str, View]) -> list[Hit]:
    out: list[Hit] = []
    for name in ("folded_words", "leet_words", "words"):
        out += _hits(v[name], _OVERRIDE_WORDS, "injection-override", "instruction override")
        out += _hits(v[name], _ROLE_WORDS, "role-override", "role-play override")
    for name in ("squash", "leet_squash"):
        out += _hits(
            v[name], _OVERRIDE_SQUASH, "injection-override", "instruction override (spaced out)"
        )
    out += _hits(v["plain"], _OVERRIDE_CJK, "injection-override", "instruction override")
    out += _hits(
        v["squash"], _OVERRIDE_CJK, "injection-override", "instruction override (spaced out)"
    )
    out += _hits(v["plain"], _ROLE_CJK, "role-override", "role-play override")
    out += _hits(v["folded"], _ROLE_MARKERS, "role-override", "chat-role marker")
    out += _hits(v["folded"], _ROLE_TAG, "role-override", "role tag opening a line")
    return out


#: design 422: keys of an agent's own step record (browser-use state, ReAct, chat tool
#: calls). A patch text that writes such a record forges what the agent thought or did.
_STATE_KEY = re.compile(
    r"[\"'](current_state|evaluation_previous_goal|next_goal|important_contents|memory|thought|"
    r"thoughts|action|action_input|observation|tool_calls|function_call|role)[\"']\s*:\s*"
    r"(?:[\"']\s*(system|assistant|developer|tool)\b)?"
)
_STATE_DISTINCT = frozenset(
    {
        "current_state",
        "evaluation_previous_goal",
        "next_goal",
        "important_contents",
        "action_input",
        "tool_calls",
        "function_call",
    }
)


def agent_state(raw: str) -> list[Hit]:
    """A record in the shape of the agent's own state or tool call: two or more of its
    keys, one of them specific to agents (or a chat role other than the user)."""
    found = list(_STATE_KEY.finditer(raw.casefold()))
    keys = {m.group(1) for m in found}
    specific = keys & _STATE_DISTINCT or {m.group(1) for m in found if m.group(2)}
    if len(keys) < 2 or not specific:
        return []
    s, e = found[0].start(), found[-1].end()
    return [Hit("role-override", s, e, f"forged agent state or tool call: {sorted(keys)}")]


#: Design 446: a setting in a config an agent loads (JSON, YAML, env, TOML) whose name says
#: it switches a control off or raises rights, set on ("BYPASS_PERMISSION": "true",
#: escalateAdmin: true, dangerouslySkipPermissions: true), or a control's switch set off
#: (requireApproval: false, "security.authentication.required": false).
_SETTING = re.compile(
    r"[\"']?([A-Za-z][\w.-]{2,80})[\"']?\s*[:=]\s*[\"']?(true|yes|on|1|false|no|off|0)[\"']?(?![\w.-])",
    re.IGNORECASE,
)


def _wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


_SETTING_TURN = _wordset(
    "bypass skip disable disabled escalate elevate override overrides ignore dangerously "
    "unsafe insecure allow no"
)
_SETTING_CONTROL = _wordset(
    "permission permissions auth authentication authorization security validation "
    "verification verify rbac sandbox sandboxing approval approvals review admin "
    "privileges privilege escalation guard guardrails safety firewall audit signature "
    "signatures ssl tls cert certificate certs hooks"
)
_SETTING_REQUIRE = _wordset("require requires required enforce enforced enabled enable")
_SETTING_POLICY = _wordset("approval approvals review admin privileges privilege escalation")
_SETTING_SHIP = _wordset(
    "include includes collect sync send transmit forward export upload share mirror"
)
_SETTING_PRIVATE = _wordset(
    "pii ssn ssh keys creds credentials secrets env tokens passwords financial health "
    "medical patient payment phi"
)
_SETTING_OUT = re.compile(r"\bhttps?://(?!(?:localhost|127\.0\.0\.1|\[::1\])[:/])", re.IGNORECASE)


def _setting_words(key: str) -> list[str]:
    key = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key)
    return [w for w in re.split(r"[\W_]+", key.lower()) if w]


def config_disarm(raw: str) -> list[Hit]:
    """Settings that switch a control off or raise rights, or ship private data to the
    outside endpoint the same text names (design 446)."""
    out = []
    outside = _SETTING_OUT.search(raw) is not None
    for m in _SETTING.finditer(raw):
        words = set(_setting_words(m.group(1)))
        on = m.group(2).lower() in ("true", "yes", "on", "1")
        shown = repr(m.group(0)[:80])
        if on and outside and words & _SETTING_SHIP and words & _SETTING_PRIVATE:
            note = f"a setting ships private data to an outside endpoint: {shown}"
            out.append(Hit("policy-exfiltration", m.start(), m.end(), note))
            continue
        controls, turned = words & _SETTING_CONTROL, words & _SETTING_TURN
        # "allow" alone only raises rights when what it allows is escalation itself
        switched_off = on and bool(turned) and (turned != {"allow"} or "escalation" in controls)
        # "requiresApproval": false on staging is a team's policy, not a disarm
        unrequired = not on and bool(words & _SETTING_REQUIRE and controls - _SETTING_POLICY)
        if controls and (switched_off or unrequired):
            note = f"a setting turns a control off: {shown}"
            out.append(Hit("policy-disarm", m.start(), m.end(), note))
    return out


#: Design 446: code that reads several secrets from the environment and packs them into one
#: payload (a dict serialised, encoded or pickled): gathered to be carried off.
_ENV_SECRET_READ = re.compile(
    r"(?:os\.environ\[|os\.environ\.get\(|os\.getenv\(|process\.env\.|process\.env\[|ENV\[)"
    r"\s*[\"']?\w*(?:KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|DATABASE_URL)\w*",
    re.IGNORECASE,
)
_PACK = re.compile(
    r"\b(?:json\.dumps?|JSON\.stringify|base64\.\w*encode|b64encode|pickle\.dumps?|"
    r"urlencode|btoa|Buffer\.from)\s*\("
)


#: an assignment opening a line: the reads before and after it are two statements
_NEW_STATEMENT = re.compile(r"\n\s*(?:const |let |var )?[\w.]+\s*=(?!=)")


def secret_bundle(raw: str) -> list[Hit]:
    """Two secret environment reads in one statement (a dict or list literal), packed within
    300 characters."""
    reads = list(_ENV_SECRET_READ.finditer(raw))
    for a, b in itertools.pairwise(reads):
        if b.start() - a.start() <= 400 and not _NEW_STATEMENT.search(raw, a.end(), b.start()):
            pack = _PACK.search(raw, b.end(), b.end() + 300)
            if pack is not None:
                note = "gathers several secrets into one payload"
                return [Hit("credential-request", a.start(), pack.end(), note)]
    return []


def _clause_has(parsed: list[grammar.Clause], pos: int, rx: re.Pattern[str]) -> bool:
    c = grammar.at(parsed, pos)
    return c is not None and rx.search(c.text) is not None


def _secret_reads(view: View) -> list[Hit]:
    """Secrets read from the environment where the read hands the value to a reader
    (:data:`_CRED_READ`)."""
    out = []
    for m in _CRED_READ.finditer(view.text):
        before = view.text[: m.start()]
        lead = before[_m.end() :] if (_m := _CLAUSE_START.match(before)) else before
        if not (
            _WHOLE_ENV.match(view.text, m.start())
            or _IN_URL.search(before)
            or _SHOW_WORD.search(lead)
        ):
            continue  # passed to the tool that needs it: "--api-key "$API_KEY""
        s, e = view.span(m.start(), m.end())
        out.append(Hit("credential-request", s, e, f"secret read shown: {m.group(0)[:80]!r}"))
    return out


def credentials(v: dict[str, View], raw: str = "") -> list[Hit]:
    out: list[Hit] = []
    parsed = grammar.parse(raw) if raw else []
    for name in ("folded_words", "leet_words", "words"):
        view = v[name]
        for m in _CRED_WORDS.finditer(view.text):
            if _negated(view.text, m.start(1)) or set(m.group(0).split()[1:]) & _NEGATIONS:
                continue
            s, e = view.span(m.start(), m.end())
            verb = m.group(1)
            word = m.group(0).split(" ")[0]
            form = grammar.form_of(word, verb.__eq__)
            if parsed and (
                grammar.in_name(raw, s, view.span(m.start(1), m.start(1) + len(word))[1])
                or not grammar.governs(parsed, raw, s, form=form)
                or (
                    grammar.is_gerund(word, verb.__eq__)
                    and not grammar.gerund_ordered(parsed, raw, s)
                )
            ):
                continue  # prohibited, conditional, quoted, passive or a name (designs 340, 401)
            if verb not in _STRONG_CRED_VERBS and parsed and not _clause_has(parsed, s, _SINK):
                continue  # "store API keys in environment variables": no reader
            if raw and _INTO_ENV_FILE.match(raw, e):
                continue  # design 447: 'echo "AA_API_KEY=..." >> .env' configures
            out.append(
                Hit("credential-request", s, e, f"asks for credentials: {m.group(0)[:80]!r}")
            )
    out += _hits(v["folded"], _CRED_DIRECT, "credential-request", "secret location or env dump")
    out += _secret_reads(v["folded"])
    for m in _SECRET_ENV_NAME.finditer(raw):
        c = grammar.at(parsed, m.start()) if parsed else None
        if c is not None:
            lead = plain(raw[c.start : m.start()]).text
            show = _SHOW_VERBS.search(lead)
            if show is None or not grammar.governs(parsed, raw, m.start()):
                continue  # named, not asked for: "set OPENAI_API_KEY in the environment"
            form = grammar.form_of(show.group(0), lambda w: _SHOW_VERBS.fullmatch(w) is not None)
            at = max(c.start, raw.casefold().find(show.group(0), c.start, m.start()))
            if form != "base" and not grammar.governs(parsed, raw, at, form=form):
                continue  # design 446: "the secrets parameter includes HF_TOKEN" describes
            if _INTO_ENV_FILE.match(raw, m.end()):
                continue  # design 446: 'echo "HF_TOKEN=..." >> .env' configures, shows nothing
            if _SHELL_EXPORT.search(lead) and not _clause_has(parsed, m.start(), _SINK):
                continue  # design 428: "export GITHUB_TOKEN so gh can authenticate" configures
        out.append(
            Hit("credential-request", m.start(), m.end(), f"names a secret variable {m.group(0)!r}")
        )
    return out + _cjk_hits(v["plain"], _CRED_CJK, "credential-request", "asks for credentials")


def _cjk_hits(view: View, rx: re.Pattern[str], code: str, note: str) -> list[Hit]:
    """Hits of a CJK pattern not right after a negation ("不要", "禁止", ...)."""
    out = []
    for m in rx.finditer(view.text):
        if _NEG_CJK.search(view.text[max(0, m.start() - 6) : m.start()]):
            continue
        s, e = view.span(m.start(), m.end())
        out.append(Hit(code, s, e, f"{note}: {m.group(0)[:80]!r}"))
    return out


def exfiltration(v: dict[str, View], raw: str = "") -> list[Hit]:
    """Sends to an outside place. With ``raw``, a prohibited send is the rule forbidding it
    ("never send the API key to a remote server"), as in :func:`destructive` (design 446)."""
    out: list[Hit] = []
    parsed = grammar.parse(raw) if raw else []
    for name in ("folded_words", "leet_words"):
        view = v[name]
        out += _hits(view, _EXFIL_WORDS, "exfiltration", "sends data out")
        for m in _EXFIL_SEND.finditer(view.text):
            if parsed and grammar.negated_at(parsed, raw, view.span(m.start(), m.end())[0]):
                continue
            sent = view.text[max(0, m.start() - 60) : m.start() + m.group(0).rfind(" to ")]
            leak = _EXFIL_DATA.search(sent) or _EXFIL_OWNER.search(m.group(0))
            s, e = view.span(m.start(), m.end())
            code, note = (
                ("exfiltration", "sends data out")
                if leak
                else ("outbound-transfer", "sends something to an outside place")
            )
            out.append(Hit(code, s, e, f"{note}: {m.group(0)[:80]!r}"))
        for m in _EXFIL_SEND_URL.finditer(view.text):
            s, e = view.span(m.start(), m.end())
            if parsed and grammar.negated_at(parsed, raw, s):
                continue
            carried = m.group(0)[: m.group(0).rfind(" to ")]
            leak = _EXFIL_DATA.search(carried) or _EXFIL_OWNER.search(carried)
            code, note = (
                ("exfiltration", "sends data to a URL")
                if leak
                else ("outbound-transfer", "sends something to a URL")
            )
            out.append(Hit(code, s, e, f"{note}: {m.group(0)[:80]!r}"))
    out += _hits(v["folded"], _EXFIL_RAW, "exfiltration", "network upload command")
    out += [
        Hit("exfiltration", m.start(), m.end(), "network upload command")
        for m in _EXFIL_RAW_CASED.finditer(raw)
    ]
    return out


def destructive(v: dict[str, View], raw: str = "") -> list[Hit]:
    out = _hits(v["folded"], _DESTRUCTIVE, "destructive-command", "destroys system files or disks")
    found = _hits(v["folded"], _IMPAIR, "policy-disarm", "turns off auditing or erases its traces")
    found += _hits(
        v["folded"], _ESCALATE_SQL, "policy-escalation", "grants a database's top rights"
    )
    found += _hits(v["folded"], _HARVEST, "credential-request", "collects key files from the disk")
    found += _hits(v["folded"], _DESTROY_PROD, "destructive-command", "destroys production data")
    if found and raw:  # a rule forbidding the command is not the command (design 444)
        parsed = grammar.parse(raw)
        found = [h for h in found if not grammar.negated_at(parsed, raw, h.start)]
    out += found + _cjk_hits(v["plain"], _IMPAIR_CJK, "policy-disarm", "turns off auditing")
    return out + _hits(v["folded"], _CODE_EXFIL, "exfiltration", "code that uploads data")


def remote_exec(v: dict[str, View]) -> list[Hit]:
    out = _hits(v["folded"], _REMOTE_EXEC, "remote-exec", "downloads and runs code")
    for name in ("folded_words", "leet_words"):
        out += _hits(v[name], _REMOTE_EXEC_WORDS, "remote-exec", "downloads and runs code")
    return out


def urls(v: dict[str, View], allow: Sequence[str]) -> list[Hit]:
    out: list[Hit] = []
    text = v["folded"].text
    taken: list[tuple[int, int]] = []
    for m in _URL.finditer(text):
        url = m.group(0)
        host = re.sub(r"^[^/]*//", "", url).split("/", 1)[0].split("@")[-1].split(":")[0]
        host = host.replace("[.]", ".").replace("(.)", ".")
        taken.append((m.start(), m.end()))
        if not _allowed(host, allow):
            s, e = v["folded"].span(m.start(), m.end())
            code = (
                "url" if url.startswith(("http", "ftp", "ws", "file", "sftp")) else "url-obfuscated"
            )
            code = "url-obfuscated" if re.search(r"\[\.\]|\(\.\)|\[:\]", url) else code
            out.append(Hit(code, s, e, f"URL outside the allowlist: {url[:80]!r}"))
    for rx in (_HOST, _IPV4):
        for m in rx.finditer(text):
            if any(a <= m.start() < b for a, b in taken):
                continue
            host = re.sub(r"\s?\[dot\]\s?|\s\(dot\)\s|\[\.\]|\(\.\)|\{\.\}", ".", m.group(0)).split(
                ":"
            )[0]
            if not _allowed(host, allow):
                s, e = v["folded"].span(m.start(), m.end())
                code = "url" if host == m.group(0).split(":")[0] else "url-obfuscated"
                out.append(Hit(code, s, e, f"host outside the allowlist: {m.group(0)[:80]!r}"))
    for m in _HOST_DOT_WORD.finditer(v["folded_words"].text):
        host = f"{m.group(1)}.{m.group(2)}"
        if not _allowed(host, allow):
            s, e = v["folded_words"].span(m.start(), m.end())
            out.append(Hit("url-obfuscated", s, e, f"spelled-out host {host!r}"))
    return out


def _decoded(blob: str) -> str | None:
    s = blob.rstrip("=")
    for alt in (False, True):
        try:
            raw = (base64.urlsafe_b64decode if alt else base64.b64decode)(s + "=" * (-len(s) % 4))
        except (binascii.Error, ValueError):
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if text and sum(c.isprintable() or c in "\n\t" for c in text) / len(text) > 0.9:
            return text
    return None


def blobs(raw: str) -> list[Hit]:
    out = []
    for m in _B64.finditer(raw):
        b = m.group(0)
        classes = sum(
            (any(c.isupper() for c in b), any(c.islower() for c in b), any(c.isdigit() for c in b))
        )
        if classes < 3 and not b.endswith("=") and not any(c in b for c in "+"):
            continue
        dec = _decoded(b)
        note = f"base64 blob ({len(b)} chars)" + (f" decoding to {dec[:60]!r}" if dec else "")
        out.append(Hit("base64-blob", m.start(), m.end(), note))
    for m in _HEX_ESC.finditer(raw):
        if in_url(raw, m.start()):
            continue
        out.append(
            Hit("encoded-blob", m.start(), m.end(), f"escaped bytes ({len(m.group(0))} chars)")
        )
    return out


def decoded_payloads(raw: str, allow: Sequence[str]) -> list[Hit]:
    """Scan what base64 blobs decode to; hits point at the blob."""
    out = []
    for m in _B64.finditer(raw):
        dec = _decoded(m.group(0))
        if not dec:
            continue
        for h in scan_text(dec, allow, decode=False):
            out.append(Hit(h.code, m.start(), m.end(), f"inside base64: {h.note}"))
    return out


#: design 448: words that English text always has and its rot13, reversal or Morse never has
_FUNCTION_WORDS = frozenset(
    (
        "the", "a", "an", "to", "and", "of", "in", "is", "you", "your", "all",
        "for", "this", "that", "with", "on", "be", "it", "are", "not", "or", "as",
        "me", "my", "i", "do", "now", "from", "any", "what", "if", "can", "will",
    )
)  # fmt: skip
_MORSE = {
    ".-": "a",
    "-...": "b",
    "-.-.": "c",
    "-..": "d",
    ".": "e",
    "..-.": "f",
    "--.": "g",
    "....": "h",
    "..": "i",
    ".---": "j",
    "-.-": "k",
    ".-..": "l",
    "--": "m",
    "-.": "n",
    "---": "o",
    ".--.": "p",
    "--.-": "q",
    ".-.": "r",
    "...": "s",
    "-": "t",
    "..-": "u",
    "...-": "v",
    ".--": "w",
    "-..-": "x",
    "-.--": "y",
    "--..": "z",
}  # fmt: skip
_MORSE_TEXT = re.compile(r"[\s./|-]+")
#: design 450: Morse after a harmless lead-in ("Shipping notes: .. --. -. --- .-. .")
_MORSE_RUN = re.compile(r"(?<![\w.-])(?:[.-]{1,7}(?:\s*/\s*|\s+)){7,}[.-]{1,7}(?![\w.-])")
#: design 450: text spelled as hex bytes, 12 characters or more
_HEX_RUN = re.compile(r"(?<![0-9A-Za-z])(?:[0-9a-fA-F]{2}){12,}(?![0-9A-Za-z])")
_SHORT_B64 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{12,39}={0,2}(?![A-Za-z0-9+/=])")
_ROT13 = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm",
)


def _english(text: str) -> int:
    return sum(w in _FUNCTION_WORDS for w in re.findall(r"[a-z]+", text.casefold()))


def rewritten(raw: str) -> list[tuple[str, str]]:
    """(how, text): the readings of ``raw`` an obfuscation hides (design 448) - rot13 or
    reversed English (a text with three words or more and no English function word whose
    rewrite has one; rot13 also wherever the text names it), Morse code, Latin letters under
    diacritics or combining marks (a third of the letters or more), short base64 runs that
    decode to words; since design 450 also Morse after a lead-in and hex bytes."""
    out = []
    words = re.findall(r"[A-Za-z]{2,}", raw)
    plain_english = _english(raw)
    rot = raw.translate(_ROT13)
    if (len(words) >= 3 and plain_english == 0 and _english(rot)) or re.search(
        r"(?i)\brot-?13\b", raw
    ):
        out.append(("after rot13", rot))
    back = raw[::-1]
    if len(words) >= 3 and plain_english == 0 and _english(back):
        out.append(("read backwards", back))
    runs = [raw] if _MORSE_TEXT.fullmatch(raw) else _MORSE_RUN.findall(raw)
    for run in runs:
        if run.count(".") + run.count("-") < 6:
            continue
        letters = [
            " ".join("".join(_MORSE.get(c, "") for c in w.split()) for w in word.split("/"))
            for word in re.split(r"\s*[|\n]\s*", run.strip())
        ]
        out.append(("after Morse", " ".join(letters)))
    marked = sum(1 for c in unicodedata.normalize("NFD", raw) if unicodedata.category(c) == "Mn")
    latin = sum(c.isascii() and c.isalpha() for c in unicodedata.normalize("NFD", raw))
    if latin and marked * 3 >= latin:
        bare = "".join(
            c for c in unicodedata.normalize("NFD", raw) if unicodedata.category(c) != "Mn"
        )
        out.append(("without diacritics", bare))
    for m in _HEX_RUN.finditer(raw):  # design 450: text spelled as hex bytes
        spelled = bytes.fromhex(m.group(0)).decode("latin-1")
        if " " in spelled.strip() and spelled.isascii() and spelled.isprintable():
            out.append(("inside hex", spelled))
    for m in _SHORT_B64.finditer(raw):
        dec = _decoded(m.group(0))
        if dec and " " in dec.strip() and dec.isascii():
            out.append(("inside base64", dec))
    return out


def scan_rewritten(raw: str, allow: Sequence[str]) -> list[Hit]:
    """Hits in what :func:`rewritten` reads under an obfuscation; they point at the whole text."""
    out = []
    for how, text in rewritten(raw):
        for h in scan_text(text, allow, decode=False):
            out.append(Hit(h.code, 0, len(raw), f"{how}: {h.note}"))
    return out


def scan_glued(raw: str, allow: Sequence[str]) -> list[Hit]:
    """Hits in texts glued without a separator (``"<|im_" + "start|>"``).

    Only detectors whose shapes a split can break mid-token; word-level ones (credentials,
    mixed-script words) would see false words at the seams.
    """
    v = views(raw)
    return dedupe(injection(v) + remote_exec(v) + exfiltration(v) + urls(v, allow))


def policy(v: dict[str, View], raw: str | None = None) -> list[Hit]:
    """Policy classes (``intents``) on the word views, letter-by-letter words glued; with
    ``raw``, read through the clause grammar (design 340)."""
    out: list[Hit] = []
    for name in ("words", "folded_words", "joined_words", "leet_words"):
        out += [
            Hit(h.code, h.start, h.end, h.note)
            for h in intents.policy_intents(v[name], raw)
            # design 447: 'echo "AA_API_KEY=..." >> .env' writes a local file no reader sees
            if not (raw and h.code == "policy-exfiltration" and _INTO_ENV_FILE.match(raw, h.end))
        ]
    return out


def obfuscation(raw: str) -> list[Hit]:
    """Ways of writing text so that a reader or a filter does not see it."""
    out = [Hit("encoded-text", s, e, note) for s, e, note in escape_spans(raw)]
    for s, e in spaced_runs(raw):
        if e - s >= 7:
            out.append(Hit("spaced-word", s, e, f"word written letter by letter {raw[s:e]!r}"))
    return out


def scan_text(raw: str, allow: Sequence[str], *, decode: bool = True) -> list[Hit]:
    """Every content hit in one text (and in what its escapes and base64 runs decode to)."""
    v = views(raw)
    hits = hidden_unicode(raw) + homoglyphs(raw) + injection(v) + credentials(v, raw)
    hits += exfiltration(v, raw) + remote_exec(v) + urls(v, allow) + blobs(raw) + policy(v, raw)
    hits += destructive(v, raw) + agent_state(raw) + config_disarm(raw) + secret_bundle(raw)
    hits += [Hit(h.code, h.start, h.end, h.note) for h in host_actions(raw)]
    hits += [Hit(h.code, h.start, h.end, h.note) for h in agent_misuse(raw)]
    hits += [Hit(h.code, h.start, h.end, h.note) for h in claims(raw)]
    hits += [Hit(h.code, h.start, h.end, h.note) for h in hijacks(raw)]
    hits += [Hit(h.code, h.start, h.end, h.note) for h in planted(raw)]
    hits += [Hit(h.code, h.start, h.end, h.note) for h in output_abuse(raw)]
    hits += obfuscation(raw)
    if decode:
        hits += decoded_payloads(raw, allow) + scan_rewritten(raw, allow)
        plain_text = unescape(raw)
        if plain_text != raw:
            for h in scan_text(plain_text, allow, decode=False):
                hits.append(Hit(h.code, 0, len(raw), f"after decoding escapes: {h.note}"))
    return dedupe(hits)


def dedupe(hits: Iterable[Hit]) -> list[Hit]:
    """One hit per code and overlapping span (the first found, i.e. the most direct view).

    A code's kept spans overlap none of each other, so in (start, end) order their ends never
    fall: the last one starting before a hit's end is the only one that can overlap it (one
    binary search a hit; 20,000 zero-width characters' hits compared pairwise took 35 s)."""
    out: list[Hit] = []
    kept: dict[str, list[tuple[int, int]]] = {}
    for h in hits:
        spans = kept.setdefault(h.code, [])
        k = bisect.bisect_left(spans, (h.end, -1)) - 1
        if k >= 0 and spans[k][1] > h.start:
            continue
        bisect.insort(spans, (h.start, h.end))
        out.append(h)
    return out


#: Words that mark a rule or section as being about permissions, network, writes outside the
#: workspace or secrets (then a human approves the patch).
_SENSITIVE_WORDS = _rx(
    r"\b(?:permissions?|privileges?|privileged|sudo|su root|chmod|chown|setuid|root access|as root|"
    r"admin rights|escalat\w*)\b",
    r"\b(?:network|internet|sockets?|proxy|firewall|dns|ssh|curl|wget|web ?hooks?|remote hosts?|"
    r"deploy (?:keys?|tokens?)|add (?:a |an )?(?:new )?(?:members?|maintainers?|collaborators?|owners?)|"
    r"transfer (?:the |my |this |your )?(?:project|repo\w*)|delete (?:the |my |this |your )?"
    r"(?:project|repo\w*)|make (?:the |my |this |your )?(?:project|profile|repo\w*) public|"
    r"external (?:service|server|api)s?|(?:pip|pip3|npm|apt|apt get|yum|brew|cargo|gem) install|"
    r"download\w* (?:from|the|a|an|and|any|files?|packages?|dependencies|scripts?)|"
    r"upload\w* (?:to|the|a|an|any|files?|results?|data))\b",
    r"\b(?:secrets?|credentials?|passwords?|api keys?|access keys?|private keys?|"
    r"(?:access|auth|bearer|api|github|session) tokens?|dotenv|env files?|keychain|cookies?)\b",
    r"\b(?:outside (?:of )?(?:the )?(?:workspace|repo|repository|project|working directory|sandbox)|"
    r"home directory|absolute paths?|system wide|global(?:ly)? install\w*|etc (?:passwd|shadow|hosts))\b",
)
_SENSITIVE_RAW = _rx(r"(?:^|\s)(?:/etc/|/usr/|/var/|/root/|~/|\$home\b)")
_SENSITIVE_CJK = _rx(
    r"权限|權限|提权|提權|网络|網絡|網路|联网|聯網|下载|下載|上传|上傳|代理|防火墙|密钥|密鑰|凭证|憑證|凭据|"
    r"密码|密碼|令牌|环境变量|環境變量|工作区之外|工作區之外|工作目录之外|主目录|系统目录",
)


def sensitive_topics(raw: str) -> list[Hit]:
    v = views(raw)
    out = _hits(v["folded_words"], _SENSITIVE_WORDS, "sensitive-topic", "about")
    out += _hits(v["folded"], _SENSITIVE_RAW, "sensitive-topic", "about")
    out += _hits(v["plain"], _SENSITIVE_CJK, "sensitive-topic", "about")
    return dedupe(out)
