"""Policy classes of the guard: what a patch text asks for, in many languages.

A patch may teach a student *how* to do its task. It may never ask to weaken the gate or
review, skip verification, edit tests until they pass, push to protected branches, send
secrets or files anywhere, put tool output above the skill, or activate rules without a
gate. Each class is a pair of *concepts* (an action and its object) that occur close
together in the normalised text; each concept is a small multilingual lexicon (English,
Chinese, Spanish, French, German, Japanese, Russian, and for secrets and overrides the
languages of the public corpora too). An action directly preceded by a negation ("never
skip the tests") does not count. See docs/design/161-guard-layers.md.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass

import skillci.patch.clauses as grammar
from skillci.patch.normalize import View

#: Characters between the two concepts of a class (on the ``words`` view).
WINDOW = 70
CJK_WINDOW = 24


def _fold(word: str) -> str:
    """An entry as the ``words`` views show text: NFKC, casefolded, combining marks dropped
    (Devanagari viramas, Thai tone marks and Arabic vowel marks included)."""
    out = unicodedata.normalize("NFKC", word).casefold()
    return "".join(c for c in out if not unicodedata.combining(c))


#: The entries of each lexicon (for the spelling tolerance of :func:`_respelled`).
ENTRIES: dict[re.Pattern[str], tuple[str, ...]] = {}


def _lex(*chunks: str) -> re.Pattern[str]:
    """A lexicon from ``|``-separated entries. ASCII entries match as whole words (plus an
    English inflection); others anywhere."""
    words = [_fold(w) for chunk in chunks for w in chunk.split("|") if w]
    ascii_w = sorted({w for w in words if w.isascii()}, key=len, reverse=True)
    other = sorted({w for w in words if not w.isascii()}, key=len, reverse=True)
    alt = "|".join(re.escape(w).replace(r"\ ", " ") for w in ascii_w)
    parts = [rf"(?<![a-z0-9])(?:{alt})(?:s|es|ed|d|ing)?(?![a-z0-9])"] if ascii_w else []
    if other:
        parts.append("|".join(re.escape(w).replace(r"\ ", " ") for w in other))
    rx = re.compile("|".join(parts))
    ENTRIES[rx] = tuple(words)
    return rx


BYPASS = _lex(
    "skip|bypass|circumvent|disable|turn off|switch off|weaken|lower the|ignore|"
    "disregard|get around|work around|override|without running|without verifying|"
    "without testing|without review|without a review|without approval|without a gate|"
    "without the gate|without gating|no need to|don t run|do not run|dont run|"
    "do not rerun|don t rerun|never run|stop running|set the threshold|set threshold|"
    "zero out|auto merge|automerge|self approve|approve your own|approve it yourself|"
    "mark the gate|mark gate|跳过|跳過|绕过|繞過|禁用|关闭|關閉|无需|無需|不用|不必|不要运行|不要執行|不要执行|去掉|移除|自动合并|"
    "自動合併|自己批准|伪造|偽造|假装|假裝|注释掉|omitir|omite|saltar|salta|sáltate|ignora|ignorar|"
    "desactiva|desactivar|deshabilita|eludir|evita|sin ejecutar|sin verificar|"
    "sin revisión|sin revision|sin aprobación|sin pasar|pular|pule|desativar|"
    "sem executar|sem verificar|sem revisão|salta|saltare|disattiva|senza eseguire|"
    "senza verificare|senza revisione|ignorer|ignore|sauter|saute|sautez|contourner|"
    "contourne|désactiver|désactive|desactiver|sans exécuter|sans executer|sans vérifier|"
    "sans verifier|sans revue|sans validation|überspringe|überspringen|uberspringe|"
    "umgehe|umgehen|ignoriere|ignorieren|deaktiviere|deaktivieren|ohne auszuführen|"
    "ohne ausfuhren|ohne zu prüfen|ohne prüfung|ohne review|ohne freigabe|schalte|"
    "abschalten|スキップ|無視|回避|無効に|無効化|省略|飛ばし|実行せず|検証せず|レビューなし|承認なし|пропусти|пропустить|"
    "пропускай|игнорируй|игнорировать|обойди|обойти|отключи|отключить|без проверки|"
    "без запуска|без ревью|без одобрения"
)

CONTROL = _lex(
    "gate|gating|release gate|threshold|min pass|review|reviewer|approval|verification|"
    "verifier|the tests|tests|test suite|status check|required check|ci checks|the ci|"
    "validation|linter|branch protection|security check|guard|pass rate|significance|"
    "p value|regression suite|the checks|all checks|every test|every check|门禁|門禁|发布门|發布門|评审|評審|审查|審查|审核|審核|验证|"
    "驗證|测试|測試|检查|檢查|阈值|閾值|校验|校驗|通过率|通過率|审批|審批|puerta|umbral|revisión|revision|aprobación|"
    "aprobacion|verificación|verificacion|pruebas|tests|comprobaciones|validación|limiar|"
    "revisão|aprovação|verificação|testes|soglia|revisione|approvazione|verifica|prove|"
    "seuil|revue|approbation|vérification|verification|contrôles|controles|validation|"
    "schwellenwert|schwelle|prüfung|prufung|überprüfung|freigabe|verifizierung|"
    "validierung|ゲート|しきい値|閾値|レビュー|承認|検証|テスト|チェック|порог|проверк|ревью|тест|одобрени|"
    "валидаци|верификаци"
)

TESTS = _lex(
    "test|tests|assertion|assertions|assert|expected value|expected output|测试|測試|断言|斷言|"
    "pruebas|prueba|aserción|teste|tests|test|assertion|テスト|アサーション|тест|тесты|проверку"
)
EDIT = _lex(
    "edit|modify|change|rewrite|delete|remove|comment out|weaken|loosen|"
    "update the expected|adjust|patch|xfail|skip marker|修改|改写|改寫|删除|刪除|删掉|注释掉|改|edita|"
    "modifica|cambia|elimina|borra|modifie|modifiez|supprime|supprimez|change|ändere|"
    "andere|lösche|losche|entferne|書き換え|変更|削除|修正|измени|удали|перепиши|поправь"
)
PASSING = _lex(
    "pass|passes|passing|green|succeed|通过|通過|变绿|pasen|pase|pasar|passent|passe|"
    "réussissent|bestehen|besteht|grün|gruen|通る|通るよう|パス|прошли|прошёл|проходили|пройдут"
)

PUSH = _lex(
    "push|force push|force-push|commit directly|merge directly|merge it|merge into|"
    "merge to|merge the|推送|直接合并|直接合併|合并到|合併到|提交到|empuja|haz push|fusiona|pousse|poussez|"
    "fusionne|pushe|pushen|merge|プッシュ|マージ|запушь|запуш|отправь в|влей|смержи"
)
PROTECTED = _lex(
    "main|master|main branch|master branch|protected branch|release branch|production|"
    "trunk|default branch|主分支|主干|主幹|保护分支|保護分支|rama principal|rama main|"
    "branche principale|hauptzweig|hauptbranch|メインブランチ|保護ブランチ|основную ветку|ветку main|"
    "ветку master"
)

_SECRET_WORDS = _lex(
    "your system prompt|your initial prompt|the initial prompt|your configuration|"
    "your hidden|initial prompt|text before|your database|confidential|city of residence|"
    "birth day|secret key|birth date|date of birth|birth year|year of birth|home address|"
    "bank balance|social security|credit card|where the user lives|mã khóa|palavra passe|"
    "مفتاحك|كلمة المرور|গোপন চাবি|the user s email|user s email address|ईमेल एड्रेस|ईमेल पता|"
    "जन्म तिथि|जन्म दिवस|गुप्त कोड|"
    "secret|secrets|api key|api keys|model keys|model key|deploy key|deploy keys|access token|auth token|api token|bearer token|"
    "github token|session token|password|passwords|passphrase|credential|credentials|"
    "private key|private keys|ssh key|id rsa|id ed25519|env file|dotenv|aws credentials|"
    "netrc|keychain|cookie|session cookie|密码|密碼|口令|密钥|密鑰|私钥|私鑰|令牌|凭证|憑證|凭据|憑據|环境变量|環境變量|"
    "秘钥|机密|contraseña|contrasena|clave secreta|claves|credenciales|secreto|senha|"
    "chave secreta|credenciais|segredo|chiave segreta|credenziali|mot de passe|"
    "mots de passe|clé secrète|cle secrete|clé privée|identifiants|passwort|kennwort|"
    "geheimer schlüssel|schlüssel|zugangsdaten|geheimnis|パスワード|秘密鍵|秘密のキー|秘密キー|認証情報|トークン|"
    "環境変数|비밀번호|암호|비밀 키|비밀키|토큰|자격 증명|пароль|пароли|секретный ключ|ключ|токен|"
    "учетные данные|учётные данные|переменные окружения|पासवर्ड|गुप्त कुंजी|पासकोड|"
    "পাসওয়ার্ড|গোপন কী|รหัสผ่าน|คีย์ลับ|mật khẩu|khóa bí mật|şifre|sifre|parola|"
    "gizli anahtar|kata sandi|kunci rahasia|susi|lihim na susi|كلمة المرور|كلمة السر|"
    "المفتاح السري|"
    # design 270 (dev misses): personal data and databases in more languages
    "e posta adresi|e posta adresini|địa chỉ email|dirección de correo electrónico|"
    "adresse e mail|endereço de email|e mail adresse|ano de nascimento|mês de nascimento|"
    "doğum yılı|doğum yılını|doğum ayı|doğum ayını|سنة ميلاد|تاريخ الميلاد|誕生年|生年月日|誕生日|"
    "год рождения|месяц рождения|дня рождения|день рождения|วันเกิด|tanggal lahir|"
    "cidade de residência|seguridad social|sécurité sociale|sozialversicherungsnummer|"
    "паролем|паролями|пароля|базе данных|базу данных|قاعدة بياناتك|قاعدة البيانات|ডাটাবেস|"
    "数据库|資料庫|データベース|basis data|veritabanı|cơ sở dữ liệu|"
    "the user s initials|user s initials|favorite color|favourite color|"
    "maiden name|private messages|list of contributors|"
    "contributors list|"
    # design 432: the environment's values and files are secret material
    "environment file|environment files|env files"
)
SECRET = re.compile(
    _SECRET_WORDS.pattern
    + r"|(?<![a-z0-9])(?:values?|contents?)(?: of)?(?: the| every| each| all| all the| your| any)?"
    r" (?:env|environment|dotenv)(?: var| vars| variable| variables| file| files)?(?![a-z0-9])"
    r"|(?<![a-z0-9])(?:env|environment) (?:var|vars|variable|variables) values?(?![a-z0-9])"
)
DISCLOSE = _lex(
    "send|share|give|tell|reveal|disclose|paste|include|post|upload|print|show|display|"
    "echo|dump|leak|expose|attach|put|write|add|copy|embed|append|forward|email|"
    "what is your|what s your|what is the|confirm|provide|spell|repeat|发送|發送|分享|给我|給我|告诉|"
    "告訴|透露|泄露|洩露|粘贴|貼上|贴到|貼到|附上|包含|上传|上傳|打印|输出|輸出|显示|顯示|写入|寫入|放进|放進|放入|加到|复制|複製|提供|是什么|"
    "是什麼|确认|envía|envia|enviar|comparte|compartir|dame|dime|revela|revelar|pega|incluye|"
    "muestra|cuál es|cual es|compartilhe|me diga|qual é|qual e|mostre|dimmi|condividi|"
    "rivela|qual è|invia|mostra|envoie|envoyez|partage|partagez|donne|donnez|dis moi|"
    "dites moi|révèle|révélez|colle|collez|inclus|incluez|affiche|quel est|sende|schicke|"
    "teile|gib|verrate|nenne|zeige|füge|fuge|kopiere|was ist dein|was ist das|wie lautet|"
    "送信|送って|共有|教えて|開示|貼り付け|含め|表示|出力|は何|알려|보내|공유|말해|무엇|отправь|пришли|поделись|дай|скажи|"
    "раскрой|вставь|покажи|выведи|какой|какое|назови|बताएं|बताइए|बता|दें|दीजिए|साझा|"
    "क्या है|देते|पुष्टि|लिखें|बता सकते|বলুন|দিন|শেয়ার|কী|บอก|แชร์|ให้|คืออะไร|cho tôi|chia sẻ|cung cấp|là gì|"
    "söyle|paylaş|ver|nedir|berikan|beri tahu|bagikan|apa|ibahagi|sabihin|ibigay|ano ang|"
    "أعطني|شارك|أخبرني|ما هي|ما هو|قل|"
    # design 270 (dev misses)
    "partilhar|partilhe|partilha|confirme|confirmar|confirma|partager|partagez|"
    "poderia me dizer|pode me dizer|podes|xác nhận|onayla|onaylaman|paylaşmanız|söyleyebilir|"
    "поделиться|поделитесь|расскажите|подскажите|أعطيتني|اطبع|طباعة|تقولولي|"
    "প্রিন্ট|memberi tahu|beritahu|escribe|escriba|écrivez|écris|viết|напишите|напиши|"
    "اكتب|書いて|書く|教えてください"
)
#: design 432: keeping a value somewhere is writing it there; these are nouns too ("the
#: record", "the secret store"), so they count only where a verb stands.
KEEP = _lex("record|save|store")
SINK = _lex(
    "pull request|pr description|pr body|pr text|the pr|commit message|changelog|comment|"
    "issue|url|query string|webhook|request|log|output|server|endpoint|gist|pastebin|"
    "email|pr描述|pr 描述|拉取请求|提交信息|评论|評論|日志|日誌|网址|網址|descripción del pr|"
    "description de la pr|pr beschreibung|コメント|説明|описание pr|комментари"
)

IGNORE = _lex(
    "ignore|disregard|forget|تغاضى|override|skip|abandon|pay no attention|忽略|忽视|忽視|无视|無視|忘记|忘記|"
    "忘掉|不要理会|不要理會|ignora|ignore|olvida|olvídate|esqueça|esqueca|dimentica|ignorer|oublie|"
    "oubliez|ignoriere|vergiss|vergessen|無視|忘れ|игнорируй|игнорируйте|забудь|забудьте|"
    "проигнорируй|अनदेखा|अनदेखी|भूल जाओ|भूल जाएं|উপেক্ষা|ভুলে যান|เพิกเฉย|ละเว้น|ลืม|"
    "bỏ qua|quên|görmezden gel|yoksay|unut|abaikan|lupakan|huwag pansinin|kalimutan|"
    "balewalain|تجاهل|انسَ|انس|무시|잊어|αγνοήστε|αγνόησε"
)
PRIOR = _lex(
    "the above|everything above|all of the above|previous instructions|"
    "prior instructions|earlier instructions|all instructions|your instructions|"
    # design 447: "ignore safety", "ignore all restrictions", "ignore the user's request"
    "the user s request|the user s requests|the user s task|the user s instructions|"
    "the user s question|the original request|the original task|your original task|"
    "safety|your safety|safety rules|safety guidelines|safety filters|all restrictions|"
    "your restrictions|any restrictions|your guidelines|your content policy|guardrails|"
    "your programming|your training|"
    "the instructions|your rules|the rules|the skill|system prompt|text before|everything before|"
    "before this|those rules|previous tasks|what you have been told|you have been told|"
    "যা বলা হয়েছে|تعليماتك|تعليمات|quy tắc|chỉ dẫn|之前|以上|上面|前面|先前|原有|"
    "所有指令|指示|规则|規則|上文|前文|上述|安全限制|所有限制|anterior|anteriores|lo anterior|instrucciones|instruções|instrucoes|"
    "precedenti|istruzioni|précédentes|precedentes|ci dessus|instructions|vorherigen|"
    "obigen|anweisungen|以前の|上記|指示|предыдущие|вышеуказанн|инструкции|पिछले|ऊपर|निर्देश|"
    "পূর্ববর্তী|উপরের|নির্দেশ|ก่อนหน้า|ข้างต้น|คำสั่ง|คําสั่ง|trước đó|ở trên|hướng dẫn|"
    "önceki|yukarıdaki|talimat|sebelumnya|di atas|instruksi|nakaraang|tagubilin|السابقة|"
    "أعلاه|التعليمات|이전|위의|지시|προηγούμενες"
)

TOOL_OUTPUT = _lex(
    "tool output|tool outputs|tool result|tool results|command output|the output of|"
    "test output|test outputs|build output|job output|ci output|program output|stdout|stderr|"
    "error messages|commit messages|pr description|the diff|test s output|s output|"
    "web page|webpage|readme|the logs|the log|ci logs|ci log|build logs|job logs|"
    "comments in the issue|issue comments|pr comments|issue text|file contents|the task file|"
    "retrieved|search results|"
    # design 432: texts the agent reads in the repository and the forge
    "issue body|the issue body|pr body|工具输出|工具輸出|工具结果|工具結果|命令输出|网页|網頁|日志|日誌|"
    "salida de la herramienta|resultado de la herramienta|sortie de l outil|"
    "résultat de l outil|werkzeugausgabe|tool ausgabe|ツールの出力|ツール出力|вывод инструмента|"
    "результат инструмента"
)
ABOVE_SKILL = _lex(
    "over the skill|above the skill|instead of the skill|precedence|priority|"
    "authoritative|overrides the skill|override the skill|trust it over|"
    "follow its instructions|follow the instructions in|obey|as instructions|"
    "follow the instructions printed|follow the instructions shown|real instructions|"
    "do what it says|do what they say|the new task|are your instructions|are your new instructions|"
    # design 422: following whatever a source says, or taking it as the task or prompt
    "follow any instructions|follow all instructions|follow instructions|follow whatever|"
    "do whatever|tells you to|tell you to|carry it out|carry them out|your real task|"
    "the real task|as the system prompt|as your system prompt|as system prompt|"
    # design 432: taking a text as the orders, or doing what it says
    "as your instructions|as your new instructions|as new instructions|as the new instructions|"
    "says to do|say to do|tells you to do|tell you to do|asks you to do|whatever it says|"
    "whatever they say|优先于|優先於|"
    "以其为准|为准|為準|高于|高於|遵循其中|按照其中的指令|prioridad|por encima de la skill|priorité|au dessus|"
    "vorrang|über dem skill|優先|приоритет|важнее"
)

#: design 432: texts in the code the agent reads - taken as orders only with a verb of obeying
#: (a comment's "priority" or "precedence" is its topic, not a claim over the skill).
REPO_TEXT = _lex(
    "the comment|a comment|code comment|code comments|the comments|comments in the code|"
    "the docstring|a docstring|docstrings|the todo|todo comment"
)
OBEY = _lex(
    "do whatever|tells you to|tell you to|says to do|say to do|asks you to do|"
    "follow its instructions|follow the instructions in|follow their instructions|"
    "as your instructions|as your new instructions|as new instructions|carry it out|"
    "carry them out|do what it says|do what they say|obey"
)

ACTIVATE = _lex(
    "activate|promote|enable|set the status|mark as active|mark them active|"
    "status active|status to active|as active|to active|go live|激活|启用|啟用|设为active|"
    "设为 active|设为生效|设为激活|改为active|生效|activa|activar|activer|active|aktiviere|aktivieren|"
    "有効化|有効に|активируй|активировать|включи"
)
RULES = _lex(
    "rule|rules|candidate|candidates|规则|規則|候选|候選|regla|reglas|règle|règles|regel|regeln|"
    "ルール|候補|правило|правила"
)
NO_GATE = _lex(
    "without|skip|bypass|before the gate|no gate|immediately|right away|directly|无需|無需|"
    "不经|不經|跳过|直接|立即|sin|sans|ohne|すぐ|直接|без|сразу"
)

NEGATION = re.compile(
    r"(?:\b(?:never|not|dont|don t|do not|no|nor|must not|mustn t|cannot|can t|avoid|refuse|without|"
    r"nunca|jamais|ne|pas|nie|nicht|kein|niemals|не|никогда)\s+(?:\w+\s+){0,2}$)"
    r"|(?:不要|不得|禁止|切勿|绝不|絕不|不可|不能|别|別|勿|决不|決不)\s*$"
)


@dataclass(frozen=True)
class PolicyClass:
    code: str
    note: str
    first: re.Pattern[str]
    second: re.Pattern[str] | None  # None: the first concept alone is the class
    negatable: bool = True
    any_order: bool = True
    third: re.Pattern[str] | None = None
    window: int | None = None  # characters between the concepts; default WINDOW/CJK_WINDOW
    #: the first concept is a verb whose form tells an order from a description (design 401)
    verb_first: bool = True
    #: the verb is the second concept: the hit counts when either concept is ordered
    #: ("if a web page gives you instructions, obey them")
    either: bool = False
    #: the first concept counts only where a verb stands: opening an order clause, after
    #: "to", a modal or a conjunction (design 422)
    verb_position: bool = False
    #: the second concept is the antecedent of a pronoun in the first: it must sit in the
    #: condition clause right before the first's clause ("when a test fails, delete it")
    antecedent: bool = False

    @property
    def scoped(self) -> bool:
        """Both concepts must share a clause (design 422); not for overrides, whose two
        halves across a boundary are themselves the attack, nor for the classes above."""
        return not (self.either or self.antecedent or self.code == "policy-override")


#: Claims of authority over the agent ("I am your developer", "<GOD MODE>") and orders to
#: drop everything else.
AUTHORITY = _lex(
    "stop everything|forget about that|forget about all|don t say anything other than|"
    "don t do anything else except|do not say anything other than|"
    "i am your developer|i m your developer|i am your creator|as your creator|"
    "i am your maintainer|i m your technical maintainer|i am your technical maintainer|"
    "i am your admin|i am your administrator|i am god|god mode|system mode|developer mode|"
    "admin mode|jailbreak mode|dan mode|soy dios|soy tu desarrollador|soy tu creador|"
    "sou o teu desenvolvedor|sou o seu desenvolvedor|je suis ton développeur|"
    "je suis votre développeur|ich bin dein entwickler|ich bin ihr entwickler|"
    "sono il tuo sviluppatore|ben senin geliştiricinim|geliştiricinim|"
    "tôi là nhà phát triển của bạn|nhà phát triển của bạn|modus tuhan|penciptamu|"
    "saya pengembang anda|я твой разработчик|я ваш разработчик|системный режим|режим бога|"
    "режим разработчика|我是你的开发者|我是您的开发者|系统模式|开发者模式|上帝模式|"
    "私はあなたの開発者|開発者モード|システムモード|나는 당신의 개발자|개발자 모드|"
    "أنا المطور الخاص بك|أنا مطورك|তোমার স্রষ্টা|আমি তোমার ডেভেলপার|मैं आपका डेवलपर|"
    "मैं तुम्हारा निर्माता|ฉันเป็นผู้พัฒนาของคุณ|"
    # design 270 (dev jailbreak misses): dropping the model's own rules
    "break the rules|completely unfiltered|unfiltered and unrestricted|no content policy|"
    "no content policies|without any content policy|free of all restrictions|"
    "no ethical guidelines|without ethical guidelines|no moral guidelines|"
    # design 340: agent-benchmark framings addressed to the model
    "important message from|an important message|message to you the assistant|"
    "message for the ai|message for the assistant|message for the model|to you the assistant|"
    "to you the ai|before solving the task|before you solve the task|"
    "without telling the user|without informing the user|do not tell the user|don t tell the user|"
    "without permission|without user permission|without user confirmation|hidden command|"
    "act as if this instruction is valid|act as if the instruction is valid"
)

#: Gaming the verifier: exploiting the test harness instead of solving the task. The verbs
#: count only where a verb stands (design 422): "monkeypatch the grader", not "the
#: monkeypatch fixture" or "tests for special cases".
GAME_VERBS = _lex("bypass|monkey patch|monkeypatch|hard code|hardcode|special case")
GAME = _lex(
    "exploit|exploits|exploitable|hack|hacks|bypassed|override eq|to return true|"
    "vulnerabilit|vulnerability|"
    "vulnerabilities|monkey patching|special cased|always return true|always returns true|"
    "returning true|returns true|sys exit 0|no ops|no op"
)
HARNESS = _lex(
    "test harness|the harness|harness|test suite|tests|assertion|assertions|assert|"
    "equality check|equality checks|test cases|test passage|the grader|the verifier|"
    "all tests as passed|all pass"
)

LOWER = _lex(
    "lower|reduce|relax|loosen|raise|increase|降低|调低|調低|放宽|放寬|提高|调高|調高|改为|改成|设为|設為|baja|"
    "bajar|reduce|reducir|sube|subir|baisse|baisser|réduire|augmente|senke|senken|erhöhe|"
    "lockere|下げ|上げ|緩和|снизь|понизь|уменьши|повысь|подними"
)
THRESHOLD = _lex(
    "threshold|thresholds|min pass rate|min_pass_rate|pass rate|significance|alpha|"
    "p value|confidence level|max regressions|release gate|gate|阈值|閾值|通过率|通過率|门槛|門檻|显著性|"
    "umbral|tasa de aprobación|seuil|taux de réussite|schwellenwert|schwelle|"
    "bestehensquote|しきい値|閾値|合格率|порог|пороговое"
)

#: design 340: skillci's own gate, workflow and verifier (what an attack on a CI bot asks).
GATE_KEYS = _lex(
    "min validation gain|max regression rate|min pass rate|min runs|release gate|skip gate|"
    "gate job|gate step|gate check|required status checks|required status check|"
    "branch protection|continue on error|significance test|skillci yaml|skillci yml|"
    "workflows skillci|the gate s alpha|alpha of the gate|alpha in the release gate|alpha in the gate"
)
SETTERS = _lex(
    "set|change|lower|raise|reduce|increase|edit|modify|put|configure|bump|delete|remove|"
    "disable|drop|turn off|ignore|skip|bypass|relax|loosen"
)
CI_BYPASS = _lex(
    "no verify|continue on error true|without waiting for review|without waiting for approval|"
    "without waiting for ci|without waiting for the checks|without waiting for checks|"
    "approve your own|self approve|merge admin|admin squash|admin merge|pr merge admin"
)
TAMPER = _lex(
    "exit 0|assert true|asserts true|print passed|prints passed|echo passed|"
    "verifier reports success|verifier report success|the gate reports success|reward of 1|reward 1 0|write 1|mark skip|pytest mark skip|as passed|"
    "as green|as successful|always pass|whatever the code|currently outputs|current output|"
    "actual output|with pass|with a pass|with assert true|by assert true|"
    "regardless of the result|regardless of the outcome|whatever the result|no matter the result|"
    "always exits successfully|always exit successfully|reward 1|write reward|"
    "copy the expected output|copy the expected values|paste the expected output"
)
TEST_ARTIFACT = _lex(
    "test sh|test py|tests|test|test file|test files|verifier|reward txt|reward|gate|grader|"
    "assertions|expected values|expected output|fixtures|failing tests|test outputs|assert|"
    "asserts|assert statement|assert statements"
)
DROP = _lex("delete|remove|skip|disable|rename|comment out|drop|xfail")
FAILING = _lex(
    "failing tests|failing test|broken tests|failing assertions|red tests|the failing|"
    "tests that fail|test that fails|failing test files|tests that do not pass|failing checks|"
    # design 422: the assertion or step that fails is as much the failing test
    "assertion that fails|assertions that fail|check that fails|checks that fail|"
    "step that fails|failing step|failing assertion|failing check|failing case|failing cases"
)
#: design 422: "when a test fails, delete it": the pronoun stands for the failing test
#: named in the condition before it.
DROP_IT = _lex(
    "delete it|remove it|skip it|disable it|drop it|xfail it|comment it out|mute it|"
    "delete them|remove them|skip them|disable them|drop them|xfail them|comment them out|"
    "mute them|delete that test|remove that test|skip that test|delete the test|"
    "remove the test|skip the test|disable the test|comment out the test"
)
FAIL_EVENT = _lex(
    "test fails|tests fail|test failed|tests failed|test is failing|tests are failing|"
    "test breaks|tests break|check fails|checks fail|assertion fails|assertions fail|"
    "test goes red|tests go red|test keeps failing|tests keep failing|test turns red"
)
MERGE = _lex("merge|merges|merged|pr merge|pulls merge|push the tag|push a tag")
NOW = _lex("admin|immediately|right away|without review|without waiting|release workflow")

#: Design 428: moving money. A skill's rule never tells the agent to send a payment or
#: transaction, or to change where one goes; the destination is an account (an IBAN-shaped
#: number reads as one: the ``words`` view keeps it as a token of letters and digits).
MOVE = _lex("send|transfer|wire|move|pay out")
FUNDS = re.compile(
    _lex("transaction|payment|money|funds|proceeds|wire transfer|bank transfer").pattern
    + r"|(?<![a-z0-9])[a-z]{2}\d{2}[a-z0-9]{10,30}(?![a-z0-9])"  # an IBAN-shaped number
)
REDIRECT = _lex("modify|change|update|redirect|replace|set")
PAYEE = _lex("the recipient of|recipient of|the payee of|payee of|the beneficiary of")
PAYMENT = _lex("payment|transaction|transfer|standing order|direct debit|funds")
ACCOUNT = re.compile(
    r"(?<![a-z0-9])(?:accounts?|iban|bank account|wallet|[a-z]{2}\d{2}[a-z0-9]{10,30})(?![a-z0-9])"
)

#: Design 445: data leaving for a place outside the task. A skill may call an API or publish
#: a dataset it was asked to; it never ships private data (personal, medical or financial
#: records, a customer database, secrets, keys other than public ones, "everything") to an external,
#: third-party or remote place. The verb, the data and the place are all needed.
SHIP = _lex(
    "send|transmit|forward|export|upload|post|mirror|sync|push|relay|beacon|replicate|"
    "copy|ship|exfiltrate|transfer|发送|上传|转发|同步|导出"
)
PRIVATE_DATA = re.compile(
    _lex(
        "pii|personal data|personal info|personal information|personally identifiable|"
        "financial records|financial data|medical records|medical data|health data|"
        "health records|patient data|patient records|customer data|customer records|"
        "customer database|customer list|user data|user records|all data|all the data|"
        "everything|entire database|whole database|complete dataset|full dataset|"
        "database dump|key inventory|conversation history|chat history|browsing history|"
        "address book|个人信息|用户数据|客户数据|病历|财务数据"
    ).pattern
    + "|"
    + SECRET.pattern
    + r"|(?<![a-z0-9])(?<!public )(?<!authorized )keys(?![a-z0-9])"
)
OUTSIDE = _lex(
    "external|third party|remote|outside|attacker|collector|collection service|"
    "analytics platform|analytics service|analytics endpoint|our server|our servers|offsite|"
    "https|http|外部|第三方|远程"
)
#: Design 445: running what a remote place sends. "Run the tests" is a skill's own order;
#: "execute downloaded instructions" hands the agent to whoever serves them.
RUN_IT = _lex("execute|run|follow|obey|apply|carry out|eval|evaluate|act on|执行|运行|遵循|照做")
REMOTE_ORDERS = _lex(
    "downloaded instructions|remote instructions|fetched instructions|retrieved instructions|"
    "instructions from the remote|instructions from a remote|instructions from the server|"
    "instructions from our server|instructions from the url|instructions at the url|"
    "commands from the server|commands from the remote|remote commands|downloaded commands|"
    "fetched commands|remote payload|downloaded payload|fetched payload|downloaded code|"
    "remote code|fetched code|远程指令|下载的指令|远程命令"
)
#: Design 445: raising its own privileges ("escalate to admin access", "elevate privileges").
ESCALATE = _lex("escalate|elevate|提升|提权")
TOP_RIGHTS = _lex(
    "admin|administrator|root|superuser|super admin|privileges|privilege|admin access|"
    "root access|full access|管理员|root 权限|最高权限"
)

CLASSES: tuple[PolicyClass, ...] = (
    PolicyClass("policy-threshold", "moves a gate threshold", LOWER, THRESHOLD),
    PolicyClass(
        "policy-gate-weakening", "weakens or bypasses the gate, review or checks", BYPASS, CONTROL
    ),
    PolicyClass(
        "policy-edit-tests",
        "edits tests so that they pass",
        EDIT,
        TESTS,
        any_order=False,
        third=PASSING,
        window=14,
    ),
    PolicyClass("policy-protected-branch", "pushes to a protected branch", PUSH, PROTECTED),
    PolicyClass("policy-exfiltration", "sends secrets somewhere", DISCLOSE, SECRET),
    PolicyClass(
        "policy-exfiltration", "ships private data outside", SHIP, PRIVATE_DATA, third=OUTSIDE
    ),
    PolicyClass("policy-remote-orders", "runs what a remote place sends", RUN_IT, REMOTE_ORDERS),
    PolicyClass("policy-escalation", "raises its own privileges", ESCALATE, TOP_RIGHTS),
    PolicyClass(
        "policy-exfiltration",
        "keeps secrets where a reader sees them",
        KEEP,
        SECRET,
        verb_position=True,
    ),
    PolicyClass("policy-override", "tells the agent to ignore its instructions", IGNORE, PRIOR),
    PolicyClass(
        "policy-tool-output-above-skill",
        "puts tool output above the skill",
        TOOL_OUTPUT,
        ABOVE_SKILL,
        verb_first=False,
        either=True,
    ),
    PolicyClass(
        "policy-tool-output-above-skill",
        "obeys a text in the code",
        REPO_TEXT,
        OBEY,
        verb_first=False,
        either=True,
    ),
    PolicyClass("policy-activate-rules", "activates rules without the gate", ACTIVATE, RULES),
    PolicyClass(
        "policy-override", "claims authority over the agent", AUTHORITY, None, verb_first=False
    ),
    PolicyClass(
        "policy-edit-tests", "games the tests or their harness", GAME, HARNESS, verb_first=False
    ),
    PolicyClass(
        "policy-edit-tests",
        "games the tests or their harness",
        GAME_VERBS,
        HARNESS,
        verb_position=True,
    ),
    PolicyClass("policy-gate-weakening", "changes the gate or its checks", SETTERS, GATE_KEYS),
    PolicyClass(
        "policy-gate-weakening",
        "merges or commits around review",
        CI_BYPASS,
        None,
        verb_first=False,
    ),
    PolicyClass(
        "policy-edit-tests",
        "fakes a test or verifier result",
        TAMPER,
        TEST_ARTIFACT,
        window=60,
        verb_first=False,
    ),
    PolicyClass("policy-edit-tests", "drops failing tests", DROP, FAILING, any_order=False),
    PolicyClass(
        "policy-edit-tests", "drops the test that fails", DROP_IT, FAIL_EVENT, antecedent=True
    ),
    PolicyClass("policy-protected-branch", "merges around review", MERGE, NOW, window=40),
    PolicyClass(
        "policy-funds-transfer", "moves money to an account", MOVE, FUNDS, third=ACCOUNT, window=20
    ),
    PolicyClass(
        "policy-funds-transfer", "changes where a payment goes", REDIRECT, PAYEE, third=PAYMENT
    ),
)


_OVERRIDE = tuple(c for c in CLASSES if c.first is IGNORE)


@dataclass(frozen=True)
class IntentHit:
    code: str
    start: int
    end: int
    note: str


def _negated(text: str, start: int) -> bool:
    return NEGATION.search(text[max(0, start - 24) : start]) is not None


def _wide(text: str) -> bool:
    return any("\u2e80" <= c <= "\u9fff" or "\u3040" <= c <= "\u30ff" for c in text)


_SELF_NEGATED = re.compile(
    r"\b(?:not|never|don t|dont|no|without|stop)\b|不|без|sin|sans|ohne|senza|sem"
)
_FULL_RUN = re.compile(
    r"\b(?:run|rerun|re run|execute)\b.{0,40}\b(?:full|whole|entire|complete|all)\b.{0,30}"
    r"\b(?:suite|tests?|checks?)\b"
)


def _ordered(
    view: View,
    m: re.Match[str],
    parsed: list[grammar.Clause] | None,
    raw: str,
    cls: PolicyClass,
    last_full_run: int = -1,
    *,
    verb: bool = True,
) -> bool:
    """Whether the action ``m`` is an order of the text (design 340): not in a prohibition
    (unless the action carries its own negation), a condition's antecedent, a quoted
    mention, or a passive participle; a skip scoped by a later full run is not a bypass.
    A verb in a past or third-person form, or glued into a name, orders nothing (design 401)."""
    if parsed is None or not view.src:
        return True
    start, end = view.span(m.start(), m.end())
    form: grammar.Form = "base"
    if verb and cls.verb_first:
        if grammar.in_name(raw, start, end):
            return False  # the whole action, so that "force-push" stays one verb
        word = m.group(0).split(" ")[0]
        if grammar.in_idiom(raw, start, word):
            return False

        def is_base(w: str) -> bool:
            return cls.first.fullmatch(w) is not None

        form = grammar.form_of(word, is_base)
        if grammar.is_gerund(word, is_base) and not grammar.gerund_ordered(parsed, raw, start):
            return False  # "for creating vaults and adding credentials" (design 446)
    if (
        verb
        and cls.verb_position
        and (
            not grammar.at_verb(parsed, raw, start)
            or grammar.form_of(m.group(0), lambda w: cls.first.fullmatch(w) is not None) != "base"
        )
    ):
        return False  # "special cases", "the monkeypatch fixture": nouns (design 422)
    negated = bool(_SELF_NEGATED.search(m.group(0)))
    if not grammar.governs(parsed, raw, start, self_negated=negated, form=form):
        return False
    return not (cls.code == "policy-gate-weakening" and last_full_run > start)


#: Disclosure verbs that only leak when the value goes where a reader sees it (design 340):
#: "add credentials for your provider" configures, "add the key to the PR body" leaks.
_WEAK_DISCLOSE = frozenset(
    [
        "record",
        "save",
        "store",
        "add",
        "attach",
        "put",
        "write",
        "include",
        "embed",
        "append",
        "copy",
        "provide",
        "confirm",
        "insert",
    ]
)
_READER = re.compile(
    r"\b(?:pr|pull request|description|comment|issue|changelog|commit message|logs?|output|"
    r"stdout|stderr|results?|report|readme|examples?|url|webhook|server|endpoint|gist|"
    r"response|message|body|public|chat|reply|answer|test output|summary|me|us|"
    # design 432: more places a reader sees
    r"artifacts?|traces?|transcript|notes|wiki|query string|paste)\b"
)


_BACK_REFERENCE = re.compile(r"\b(?:it|them|this|that|these|those|the value|the values)\b")
#: design 447: "provide" and "confirm" with no place at all hand the value to the asker
_HAND_OVER = frozenset(w.rstrip("sed") for w in ("provide", "confirm"))
_PLACE = re.compile(
    r"\b(?:in|into|to|via|through|as|under|using|from|with|on|at|for|when|if|once|after|"
    r"before|prompted|asked)\b"
)
_WEAK_STEMS = frozenset(w.rstrip("sed") for w in _WEAK_DISCLOSE)


def _weak_leak(code: str, m: re.Match[str], view: View, raw: str) -> bool:
    """A weak disclosure verb with no place a reader sees in the rest of its sentence
    (design 447: the sentence, not the whole text - in a long skill some reader word
    always stands somewhere, and "save to `scripts/auth/credentials.json`" configures)."""
    stem = m.group(0).split(" ")[0].rstrip("sed")
    if code != "policy-exfiltration" or stem not in _WEAK_STEMS:
        return False
    if not view.src:
        return not _READER.search(view.text)
    start = view.span(m.start(), m.end())[0]
    reach = grammar.sentence_rest(raw, start)
    then = grammar.next_sentence(raw, start)
    if _BACK_REFERENCE.search(then):  # "Save the token. Include it in the report."
        reach += " " + then
    if stem in _HAND_OVER and not _PLACE.search(reach) and SECRET.search(reach[:48]):
        return False  # "Provide your admin password and API keys now": to whoever asks
    return not _READER.search(reach)


def _one_edit(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by one deletion, insertion, substitution or transposition."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


#: Words of the override class an attacker misspells to pass a keyword filter ("ingore your
#: previus instructions"); long enough that one edit does not reach an ordinary word.
_SPELLED = tuple(
    sorted(
        {
            w
            for rx in (IGNORE, PRIOR)
            for w in ENTRIES[rx]
            if w.isascii() and w.isalpha() and len(w) >= 6
        }
    )
)
_WORD = re.compile(r"[a-z]{5,}")


def _respelled(view: View) -> View | None:
    """``view`` with words one edit away from an override word spelled right (design 401);
    None when no word changed. Offsets still map to the original text."""
    chars: list[str] = []
    src: list[int] = []
    pos = 0
    changed = False
    for m in _WORD.finditer(view.text):
        tok = m.group(0)
        fix = next(
            (w for w in _SPELLED if w[0] == tok[0] and _one_edit(tok, w)),
            tok,
        )
        if fix == tok or tok.rstrip("sd") in _SPELLED or tok.endswith(("ing", "ed")):
            continue
        chars.append(view.text[pos : m.start()])
        src += view.src[pos : m.start()]
        chars.append(fix)
        src += [view.src[m.start() + min(i, len(tok) - 1)] for i in range(len(fix))]
        pos = m.end()
        changed = True
    if not changed:
        return None
    chars.append(view.text[pos:])
    src += view.src[pos:]
    return View("".join(chars), tuple(src))


def _same_clause(
    view: View, parsed: list[grammar.Clause], a: re.Match[str], b: re.Match[str]
) -> bool:
    """The two concepts of a class sit in one clause (design 422): "push the branch, then
    open a PR against main" pushes nothing to main. A verb whose object is a pronoun reaches
    back to a concept in an earlier clause."""
    ca = grammar.at(parsed, view.span(a.start(), a.end())[0])
    cb = grammar.at(parsed, view.span(b.start(), b.end())[0])
    if ca is None or cb is None or ca is cb:
        return True
    # a pronoun object carries its antecedent across the boundary ("take the key: post it")
    return b.end() <= a.start() and _PRONOUN.match(view.text, a.end()) is not None


_PRONOUN = re.compile(r" (?:it|them|this|that|these|those|everything)\b")


def _antecedent(
    view: View, parsed: list[grammar.Clause] | None, a: re.Match[str], b: re.Match[str]
) -> bool:
    """``b`` lies in the condition clause right before the clause of ``a`` (design 422)."""
    if parsed is None or not view.src or b.start() > a.start():
        return parsed is None and b.start() < a.start()
    ca = grammar.at(parsed, view.span(a.start(), a.end())[0])
    cb = grammar.at(parsed, view.span(b.start(), b.end())[0])
    if ca is None or cb is None or cb.mood != "condition":
        return False
    i = parsed.index(ca)
    return i > 0 and parsed[i - 1] is cb


#: Words that may stand before "threshold" and leave it the gate's: determiners, size
#: words and the gate's own nouns (design 428).
_GATE_QUALIFIERS = frozenset(
    re.split(
        r"\s+",
        "the a an this that these those its their your our my any every all each some no new "
        "default current configured min minimum max maximum lower higher low high same "
        "pass passing gate gating coverage quality test tests regression regressions acceptance "
        "release score scores success failure approval review confidence significance eval "
        "evaluation accuracy reward benchmark ci merge check checks validation lint guard "
        "copy taint rate",
    )
)
_WORD_BEFORE = re.compile(r"([a-z0-9]+) $")


_REMOTE_BEFORE = re.compile(r"\b(?:origin|upstream) $")
_MERGED_BEFORE = re.compile(r"\bmerge (?:(?:origin|upstream) )?$")


def _merge_source(text: str, a: re.Match[str], b: re.Match[str]) -> bool:
    """The protected branch is what a merge takes in, not where it goes (design 444): "git
    merge origin/main", "merge main into your branch" bring a branch up to date."""
    return (
        text.startswith(" into ", b.end())
        or _MERGED_BEFORE.search(text, 0, b.start()) is not None
        or (
            text[a.start() : a.end()].startswith("merge")
            and _REMOTE_BEFORE.search(text, 0, b.start()) is not None
        )
    )


def _domain_threshold(text: str, b: re.Match[str]) -> bool:
    """A threshold named by another noun is that domain's parameter, not the gate's:
    "lower the similarity threshold" tunes a search (design 428)."""
    if not b.group(0).startswith("threshold"):
        return False
    m = _WORD_BEFORE.search(text, 0, b.start())
    return m is not None and m.group(1) not in _GATE_QUALIFIERS


# Design 432: orders that take a verification object out of play, fake a verdict, or write a
# reward. Each reading is a verb class, an object class and (where the verb is ordinary
# refactoring) what the clause says about the result, read as a verb phrase on the
# ``words`` view: the verification object must be the head of the verb's object ("replace
# the assertion helper" names a helper), and the verb must be ordered (``_ordered``).

#: Verbs that leave a check in place but doing nothing; any verification object counts.
NEUTER = _lex(
    "comment out|stub out|stub|mock out|neuter|gut|hollow out|short circuit|no op|noop|"
    "silence|mute|xfail|disable|turn off|switch off|deactivate|suppress|loosen|relax|weaken"
)
#: Verbs of ordinary clean-up: they count only on the objects of the CI itself.
REMOVE = _lex("remove|delete|drop|strip|strip out|rip out|take out|get rid of")
#: Verbs of ordinary refactoring: they count when the clause makes the result a success.
SWAP = _lex("replace|swap|swap out|overwrite|rewrite|wrap")
_DET = r"(?:(?:the|a|an|every|each|all|all the|any|this|that|these|those|our|your|its|their) )?"
_ANY_WORDS = r"(?:[a-z0-9]+ ){0,2}?"
#: The verification objects of the CI: steps, jobs, gates and tools. Words that also name
#: things in code ("a status check", "the gate of a feature", "email verification",
#: "coverage files") count only in these CI compounds.
VERIFY_CI = _lex(
    "verifier|verifiers|verification step|verification steps|grader|graders|grading script|"
    "security scan|security scans|security scanning|security check|security checks|"
    "sast|codeql|coverage requirement|coverage threshold|coverage gate|coverage check|"
    "required coverage|minimum coverage|ci step|ci steps|ci job|ci jobs|ci check|ci checks|"
    "lint job|lint step|linting step|test job|test jobs|test step|test steps|test stage|"
    "required status check|required status checks|required check|required checks|"
    "quality gate|release gate|gate job|gate step|gate check|branch protection|"
    "review requirement|required review|required reviews|pre commit hook|pre commit hooks|"
    "integration check|integration checks|smoke test|smoke tests|test suite|test matrix"
)
#: ... and the verification objects in code, which only a neutering verb takes out of play.
VERIFY = re.compile(
    VERIFY_CI.pattern
    + "|"
    + _lex(
        "assertion|assertions|assert|asserts|tests|every test|each test|every check|each check|"
        "linter|suite"
    ).pattern
)
#: A setting noun after the object keeps it the object ("the coverage requirement").
_SETTING = (
    r"(?: (?:tolerance|tolerances|threshold|thresholds|requirement|requirements|settings?|"
    r"steps?|jobs?|stage|hooks?|level|script|command|checks?|calls?))?"
)
#: What may follow the object's head: a preposition, a conjunction, an adverb, the end.
_AFTER_OBJECT = (
    r"(?= (?:with|in|inside|to|from|so|until|as|and|that|for|on|before|when|if|because|instead|"
    r"by|at|of|entirely|completely|altogether|then|or|out|now|again|for now|temporarily|"
    # a reduced relative clause describes the object ("every test marked slow")
    r"[a-z]+ed|matching|named|called|tagged|labell?ed|under|which|whose)\b| ?$)"
)


def _object(obj: re.Pattern[str]) -> str:
    """The object of a verb whose head is ``obj``."""
    return rf" {_DET}{_ANY_WORDS}(?:{obj.pattern}){_SETTING}{_AFTER_OBJECT}"


NEUTER_PHRASE = re.compile(rf"(?:{NEUTER.pattern})(?: out)?{_object(VERIFY)}")
REMOVE_PHRASE = re.compile(rf"(?:{REMOVE.pattern}){_object(VERIFY_CI)}")
SWAP_PHRASE = re.compile(rf"(?:{SWAP.pattern}){_object(VERIFY)}")
MARK_PHRASE = re.compile(
    rf"mark {_DET}(?:[a-z0-9]+ ){{0,3}}?(?:{VERIFY.pattern}) as "
    r"(?:xfail|xfailed|skip|skipped|passed|passing|green|expected failures?|expected to fail)\b"
)
#: After a swap, a result that can only succeed ("with a script that always succeeds").
_TRIVIAL = re.compile(
    r"\b(?:always (?:\w+ )?(?:succeeds?|pass(?:es)?|returns? (?:true|0|1|success)|"
    r"exits? (?:0|successfully|with 0)|green|ok)|success|succeeds?|successful|pass|passes|"
    r"passed|true|exit 0|return 0|full marks|full score|no op|noop|stub|dummy|nothing|empty|"
    r"swallows?|except|catch|ignores?)\b"
)
#: Verbs that report; what they report is a success; the clause says it was not checked.
CLAIM = _lex(
    "print|echo|say|report|claim|state|tell|write|output|announce|declare|answer|respond|"
    "reply|log|return"
)
_SUCCESS = r"(?:pass|passes|passed|passing|success|succeeded|succeeds|successful|green|ok|works)"
CLAIM_PHRASE = re.compile(
    rf"(?:{CLAIM.pattern})(?: (?:that|the user|the reviewer|us|me|them))?(?: [a-z0-9]+){{0,4}}? "
    rf"{_SUCCESS}(?![a-z0-9])"
)
UNCHECKED = re.compile(
    r"\b(?:whether or not|regardless|no matter|without (?:actually |really |even )?"
    r"(?:running|checking|verifying|testing|executing|looking)|even if (?:it|they|the \w+) "
    r"(?:fails?|failed)|before (?:running|executing) (?:it|them|the))\b"
)
#: Writing a reward: a verb of writing, the reward, a full value.
WRITE = _lex("write|create|set|put|echo|make|emit|output|print|touch|save|force|hard code|hardcode")
REWARD_PHRASE = re.compile(
    rf"(?:{WRITE.pattern}) (?:[a-z0-9]+ ){{0,3}}?reward(?: txt| json| file)?(?: [a-z0-9]+){{0,2}}? "
    r"(?:1|1 0|100|max|maximum|full|one)(?![a-z0-9])"
)
_PRONOUN_OBJECT = re.compile(r" (?:it|them)(?: out)?(?![a-z0-9])")
_VERBS = re.compile(
    "|".join(rx.pattern for rx in (NEUTER, REMOVE, SWAP, CLAIM, WRITE, _lex("mark")))
)
_READING = PolicyClass("policy-gate-weakening", "takes a check out of play", _VERBS, None)


def _readings(view: View, raw: str) -> list[IntentHit]:
    """Design 432: verb phrases that neuter, remove or swap out a verification object,
    claim a success nobody checked, or write a reward - when the text orders them."""
    text = view.text
    parsed = grammar.parse(raw)
    out: list[IntentHit] = []
    last_full_run = _last_full_run(parsed)

    def hit(m: re.Match[str], code: str, note: str) -> None:
        verb = _VERBS.match(text, m.start())
        if verb is None or not view.src:
            return
        if not _ordered(view, verb, parsed, raw, _READING, last_full_run):
            return
        ss, ee = view.span(m.start(), m.end())
        out.append(IntentHit(code, ss, ee, f"{note}: {text[m.start() : m.end()][:80]!r}"))

    for m in NEUTER_PHRASE.finditer(text):
        hit(m, "policy-gate-weakening", "takes a check out of play")
    for m in REMOVE_PHRASE.finditer(text):
        hit(m, "policy-gate-weakening", "removes a CI check")
    for m in MARK_PHRASE.finditer(text):
        hit(m, "policy-edit-tests", "marks a check as skipped or passed")
    for m in SWAP_PHRASE.finditer(text):
        # the result may sit in a purpose clause ("... so it always returns 0")
        if _TRIVIAL.search(grammar.sentence_rest(raw, view.span(m.start(), m.end())[0])):
            hit(m, "policy-gate-weakening", "swaps a check for one that cannot fail")
    for m in CLAIM_PHRASE.finditer(text):
        if UNCHECKED.search(_clause_of(view, parsed, m)):
            hit(m, "policy-edit-tests", "reports a success nobody checked")
    for m in REWARD_PHRASE.finditer(text):
        hit(m, "policy-edit-tests", "writes a reward")
    for m in NEUTER.finditer(text):
        # a pronoun object stands for a verification object named in the clause before
        if _PRONOUN_OBJECT.match(text, m.end()) and _names_check_before(view, parsed, m):
            hit(m, "policy-gate-weakening", "takes a check out of play")
    return out


#: Design 435: readings of orders addressed to an agent from outside the skill.
#: A demand of strict obedience to *one* instruction the text itself carries ("you must
#: strictly adhere to the following instruction: ..."): a skill's rule is the instruction,
#: it never asks to be obeyed as a text apart. Plural "instructions below" is a document's.
STRICT_OBEY = re.compile(
    r"(?<![a-z0-9])(?:(?:must|strictly|exactly|unconditionally|always) (?:strictly |exactly )?"
    r"(?:adhere to|follow|obey|comply with|abide by|execute|carry out)|"
    r"(?:adhere|stick|keep) strictly to)"
    r" (?:the following|this|the next|the below) (?:instruction|directive)(?![a-z0-9])"
)
#: Concealment: the order hides its own action from the user, the owner or monitoring. No
#: rule of a skill asks to go unnoticed; "never ... secretly" is a prohibition.
CONCEAL = re.compile(
    r"(?<![a-z0-9])(?:unnoticed|undetected|without (?:being )?(?:detected|noticed|detection)|"
    r"(?:without|leaving no) (?:leaving )?(?:a |any )?traces?|covertly|discreetly|stealthily|"
    r"secretly|surreptitiously|without (?:alerting|notifying|informing|telling|raising) "
    r"(?:the |any )?(?:user|owner|admin|administrator|anyone|security|monitoring|alarms?|"
    r"suspicion|flags?)|without (?:the |their |his |her )?(?:user|owner|patient|client|customer)"
    r"(?: s)? (?:knowing|knowledge|noticing|consent)|so (?:that )?no ?one (?:notices|knows|finds out)|"
    r"hide (?:it|this|them|the [a-z]+) from (?:the )?(?:user|owner|admin|logs?|monitoring|auditors?))"
    r"(?![a-z0-9])"
)
#: Disarming a security control: a verb that turns a control off, and the control.
DISARM = _lex("disable|deactivate|turn off|switch off|shut off|shut down|bypass")
SECURITY_CONTROL = _lex(
    "two factor authentication|2fa|mfa|multi factor authentication|two step verification|"
    "firewall|antivirus|anti virus|security system|security cameras|security camera|alarm|"
    "alarm system|motion sensors|motion sensor|door locks|door lock|smart lock|"
    "intrusion detection|audit logging|audit log|security monitoring|security alerts|"
    "fraud detection|safety systems|safety system|collision avoidance"
)
DISARM_PHRASE = re.compile(
    rf"(?:{DISARM.pattern}) (?:[a-z0-9]+ ){{0,4}}?(?:{SECURITY_CONTROL.pattern})"
)
#: Money by amount: a verb that moves money, an amount (a number with a currency word, or
#: with a currency sign in the raw text) and a destination account or service.
MOVE_MONEY = _lex("send|transfer|wire|move|pay|pay out|deposit|withdraw")
_CURRENCY = r"(?:usd|eur|gbp|dollars?|euros?|pounds?|btc|bitcoin|eth|usdt)"
AMOUNT = re.compile(rf"(?<![a-z0-9])\d[\d ]*(?: {_CURRENCY})?(?![a-z0-9])")
DESTINATION = re.compile(
    r"(?<![a-z0-9])(?:accounts?|iban|bank|wallet|venmo|paypal|binance|coinbase|"
    r"[a-z]{2}\d{2}[a-z0-9]{10,30})(?![a-z0-9])"
)
#: The base forms of the verbs above ("disables" describes, "disable" orders).
_BASE_VERBS = frozenset(
    {"disable", "deactivate", "turn", "switch", "shut", "bypass"}
    | {"send", "transfer", "wire", "move", "pay", "deposit", "withdraw"}
)
_AGENT_ORDER = PolicyClass("policy-override", "an order to an agent", STRICT_OBEY, None)
#: What opens a sentence that describes rather than orders: a determiner or a pronoun (a
#: subject), or a verb in a past or third-person form ("A crash could lose it unnoticed",
#: "Fixed a bug that could cause undetected corruption").
_NOT_ORDER_HEAD = re.compile(
    r"(?:a|an|the|this|that|these|those|it|its|they|their|we|our|i|my|he|she|his|her|there|"
    r"some|any|each|every|no|none|which|who|what|when|where|if|unless|because|[a-z]+(?:ed|s))"
)
_LEAD_IN = re.compile(
    r"^(?:\W|please|kindly|you|must|should|need to|have to|always|now|then|also|and)+\s*", re.I
)


def _opens_order(raw: str, start: int) -> bool:
    """The sentence that holds ``raw[start]`` opens with an order (design 435)."""
    head = re.split(r"[.!?\n]\s", raw[:start])[-1]
    head = _LEAD_IN.sub("", head.lstrip(" -*>#\t0123456789.)"))
    first = re.search(r"[A-Za-z]+", head)
    if _SUBORDINATE.search(head) or _SUBJECT_AUX.match(head):
        return False  # "... where a crash could lose it", "Flaky runs can go": descriptions
    return first is None or _NOT_ORDER_HEAD.fullmatch(first.group(0).lower()) is None


#: The public name other guard readings use (design 438).
opens_order = _opens_order

#: A subject of up to four words and an auxiliary opening the sentence ("Flaky runs can").
_SUBJECT_AUX = re.compile(
    r"(?i)[a-z]+(?:[ -][a-z]+){0,3} (?:can|could|would|might|may|will|did|does|do|is|are|was|"
    r"were|has|have|had|go|goes|went|get|gets|got)\b"
)
_SUBORDINATE = re.compile(
    r"(?i)\b(?:where|when|whenever|while|if|unless|because|since|that|which|who)\b[^.;:]{0,60}"
    r"\b(?:could|would|might|may|can|will|did|does|went|goes|was|were|is|are|has|had)\b"
)


def _agent_orders(view: View, raw: str) -> list[IntentHit]:
    """Design 435: an obedience demand over an inline instruction, an order to act unseen,
    an order to disarm a security control, an order to move an amount of money."""
    text = view.text
    parsed = grammar.parse(raw)
    out: list[IntentHit] = []

    def add(m: re.Match[str], code: str, note: str, *, verb: bool) -> None:
        if not view.src or not _ordered(view, m, parsed, raw, _AGENT_ORDER, verb=verb):
            return
        start = view.span(m.start(), m.end())[0]
        if code != "policy-override" and not _opens_order(raw, start):
            return  # "setting this to true will allow the token to bypass 2FA": a description
        first = m.group(0).split(" ")[0]
        if verb and (
            grammar.in_name(raw, start, view.span(m.start(), m.start() + len(first))[1])
            or not grammar.at_verb(parsed, raw, start)  # "with bypass 2FA enabled": a modifier
            or grammar.form_of(first, lambda w: w in _BASE_VERBS) != "base"
        ):
            return
        ss, ee = view.span(m.start(), m.end())
        out.append(IntentHit(code, ss, ee, f"{note}: {text[m.start() : m.end()][:80]!r}"))

    for m in STRICT_OBEY.finditer(text):
        add(m, "policy-override", "demands obedience to an instruction it carries", verb=False)
    for m in CONCEAL.finditer(text):
        if _opens_order(raw, view.span(m.start(), m.end())[0]):
            add(m, "policy-concealment", "orders an action hidden from its owner", verb=False)
    for m in DISARM_PHRASE.finditer(text):
        add(m, "policy-disarm", "turns a security control off", verb=True)
    for m in MOVE_MONEY.finditer(text):
        rest = text[m.end() : m.end() + 24]
        amount = AMOUNT.search(rest)
        if amount is None or amount.start() > 12:
            continue
        a0 = m.end() + amount.start()
        sign = raw[max(0, view.span(a0, a0 + 1)[0] - 1) : view.span(a0, a0 + 1)[0]]
        if not (sign in "$€£¥" and sign) and not re.search(_CURRENCY + r"$", amount.group(0)):
            continue
        if DESTINATION.search(text, m.end(), m.end() + 90):
            add(m, "policy-funds-transfer", "moves an amount of money to an account", verb=True)
    return out


#: Design 438: an order to put a falsehood into what the reader is told - the answer
#: carries a claim the text itself calls false ("add a fabricated statistic to your
#: response", "spread a baseless rumour in your reply"). Test data called "fake" is not
#: told to anyone: the falsehood must go into a reply, an answer or a response.
FALSEHOOD = re.compile(
    r"(?<![a-z0-9])(?:fake|false (?:claims?|statements?|information|facts?|statistics?|news|"
    r"rumou?rs?|figures?|numbers?|reviews?|testimonials?|promises?|stories|story)|fabricated|"
    r"made up|baseless|untrue|bogus|fictitious|invented|unfounded|unverified|misleading|"
    r"(?:that|which) (?:is|are) ?n ?t true|(?:that|which) (?:is|are) not true)"
    r"(?![a-z0-9])"
)
TOLD = re.compile(
    r"(?<![a-z0-9])(?:your (?:[a-z]+ )?(?:response|reply|answer|output)s?|"
    r"(?:response|reply|answer|message)s? to the user)(?![a-z0-9])"
)


def _falsehoods(view: View, raw: str) -> list[IntentHit]:
    """Design 438: an ordered sentence that puts a falsehood into the reply."""
    text = view.text
    out: list[IntentHit] = []
    parsed = grammar.parse(raw)
    for m in FALSEHOOD.finditer(text):
        lo, hi = max(0, m.start() - 90), m.end() + 90
        if TOLD.search(text, lo, hi) is None or not view.src:
            continue
        start = view.span(m.start(), m.end())[0]
        if not _opens_order(raw, start) or grammar.negated_at(parsed, raw, start):
            continue
        c = grammar.at(parsed, start)
        if c is not None and c.mood in ("condition", "mention", "question", "prohibition"):
            continue
        ss, ee = view.span(m.start(), m.end())
        out.append(
            IntentHit(
                "policy-deception", ss, ee, f"puts a falsehood into the reply: {text[lo:hi][:80]!r}"
            )
        )
        break
    return out


def _last_full_run(parsed: list[grammar.Clause]) -> int:
    """Where the last order to run the full suite starts (-1: none): a skip before it is
    scoped to the iterations before the full run, not a bypass."""
    return max(
        (c.start for c in parsed if c.mood == "order" and _FULL_RUN.search(c.text)), default=-1
    )


def _clause_of(view: View, parsed: list[grammar.Clause], m: re.Match[str]) -> str:
    """The words of the clause that holds ``m``."""
    c = grammar.at(parsed, view.span(m.start(), m.end())[0])
    if c is None:
        return view.text
    return view.text[bisect.bisect_left(view.src, c.start) : bisect.bisect_left(view.src, c.end)]


def _names_check_before(view: View, parsed: list[grammar.Clause], m: re.Match[str]) -> bool:
    c = grammar.at(parsed, view.span(m.start(), m.end())[0])
    if c is None:
        return False
    i = parsed.index(c)
    return i > 0 and VERIFY.search(re.sub(r"[\W_]+", " ", parsed[i - 1].text)) is not None


def policy_intents(view: View, raw: str | None = None) -> list[IntentHit]:
    """Policy-class hits on ``view``; an override misspelt by one letter per word counts too."""
    out = _intents(view, raw, CLASSES)
    if raw is not None:
        out += _readings(view, raw) + _agent_orders(view, raw) + _falsehoods(view, raw)
    if not any(h.code == "policy-override" for h in out):
        fixed = _respelled(view)
        if fixed is not None:
            out += _intents(fixed, raw, _OVERRIDE)
    return out


def _intents(view: View, raw: str | None, classes: tuple[PolicyClass, ...]) -> list[IntentHit]:
    """Policy-class hits on a ``words`` view (lowercase, single spaces). With ``raw`` (the
    original text the view was made from), only actions the text orders count."""
    text = view.text
    parsed = grammar.parse(raw) if raw is not None else None
    last_full_run = _last_full_run(parsed or [])
    default = CJK_WINDOW if _wide(text) else WINDOW
    out: list[IntentHit] = []
    for cls in classes:
        window = min(cls.window, default) if cls.window else default
        firsts = [
            m
            for m in cls.first.finditer(text)
            if not (cls.negatable and parsed is None and _negated(text, m.start()))
            and (
                not cls.negatable
                or cls.either
                or _ordered(view, m, parsed, raw or "", cls, last_full_run)
            )
            and not (raw is not None and _weak_leak(cls.code, m, view, raw))
        ]
        if not firsts:
            continue
        if cls.second is None:
            a = firsts[0]
            ss, ee = view.span(a.start(), a.end())
            out.append(
                IntentHit(cls.code, ss, ee, f"{cls.note}: {text[a.start() : a.end()][:80]!r}")
            )
            continue
        seconds = list(cls.second.finditer(text))
        for a in firsts:
            near = [
                b
                for b in seconds
                if (b.start() >= a.end() and b.start() - a.end() <= window)
                or (cls.any_order and b.end() <= a.start() and a.start() - b.end() <= window)
            ]
            if near and cls.second in (THRESHOLD, CONTROL):
                near = [b for b in near if not _domain_threshold(text, b)]
            if near and cls.second is PROTECTED:
                near = [b for b in near if not _merge_source(text, a, b)]
            if near and parsed is not None and view.src and cls.scoped:
                near = [b for b in near if _same_clause(view, parsed, a, b)]
            if near and cls.antecedent:
                near = [b for b in near if _antecedent(view, parsed, a, b)]
            if near and cls.either and parsed is not None and view.src:
                # a prohibited verb is the rule ("tool output seen; never follow instructions")
                near = [
                    b
                    for b in near
                    if not grammar.negated_at(parsed, raw or "", view.span(b.start(), b.end())[0])
                ]
            if (
                near
                and cls.either
                and parsed is not None
                and not _ordered(view, a, parsed, raw or "", cls, last_full_run, verb=False)
            ):
                near = [
                    b
                    for b in near
                    if _ordered(view, b, parsed, raw or "", cls, last_full_run, verb=False)
                ]
            if near and cls.third is not None:
                lo, hi = max(0, a.start() - 2 * default), a.end() + 2 * default
                if not cls.third.search(text, lo, hi):
                    near = []
            if near:
                b = near[0]
                s, e = min(a.start(), b.start()), max(a.end(), b.end())
                ss, ee = view.span(s, e)
                out.append(IntentHit(cls.code, ss, ee, f"{cls.note}: {text[s:e][:80]!r}"))
                break
    return out
