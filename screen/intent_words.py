"""The lexicons of the screen's sentence-level rules (:mod:`toolsift.screen.intent`): the words, phrases
and regular expressions of each concept a sentence is read for (a directive, something at stake, a
movement, concealment, an override, another tool and a change to how it is used), in English and the
other languages, and of what sets a finding aside (a negation, the user's consent or own request, a
protective condition). Data only: :mod:`toolsift.screen.intent` reads sentences with them.
"""

from __future__ import annotations

import re

# No public names: the lexicons are private to the sentence-level rules, which import them by name.
__all__: list[str] = []


def _words(*alternatives: str) -> str:
    return "(?:" + "|".join(alternatives) + ")"


# --- concepts -----------------------------------------------------------------------------------------

_ADDRESSEE = re.compile(
    r"\b(?:you|your|yourself|the (?:assistant|model|agent|ai|llm|bot|chatbot|copilot|language model)s?|(?:ai |"
    r"llm )?assistants?|"
    r"ai agents?|ai models?|(?:whichever|any|every) (?:ai|model|assistant|agent|llm)s?)\b|\b(?:for|to) (?:all |any |"
    r"the )?(?:ai |llm |language )?(?:models?|agents?|llms?)(?:\s*[:,!—–-]| reading| only)|"
    r"\b(?:el asistente|al asistente|l'assistant|à l'assistant|den assistenten|dem assistenten|der assistent|"
    r"l'assistente|all'assistente|o assistente|para o assistente|ao assistente)\b|(?<!\w)ассистент\w*|"
    r"助手|助理|アシスタント")
_MODAL = re.compile(
    r"\b(?:must|should|shall|needs? to|ha(?:ve|s) to|(?:is|are) (?:required|expected|supposed) to|required to|"
    r"make sure|be sure|ensure|remember to|don'?t forget to|always|never|whenever|every time|each time|"
    r"from now on|from here on|going forward|henceforth|before (?:you|using|calling|answering|responding|replying|building|"
    r"returning|running|each|every|any)|after (?:you|using|calling|each|every|any)|first,? (?:call|read|open|send|run|"
    r"use|get)|"
    r"belongs? (?:in|into)|goes (?:in|into)|works best (?:when|if)|(?:is|are) only (?:accurate|valid|correct|complete) if|"
    r"it is (?:vital|essential|critical|crucial|important|mandatory|necessary|imperative|required|expected) (?:that|"
    r"to)|needs?|"
    r"from (?:here|now|this point) onwards?)\b|"
    r"\b(?:debe|deben|debes|tiene que|tienes que|hay que|siempre|nunca|muss|musst|müssen|sollst|soll|sollen|immer|niemals|"
    r"doit|doivent|devez|dois|il faut|toujours|jamais|deve|devono|devi|sempre|mai|precisa|precisam|"
    r"sempre que|cada vez que|chaque fois|jedes mal|wenn)\b|(?<!\w)(?:должен|должна|должны|нужно|необходимо|всегда|"
    r"никогда|перед|обязательно)(?!\w)|必须|必須|务必|務必|总是|總是|始终|始終|每次|必ず|常に")
# A clause that starts with a verb in the imperative (English); other languages' imperative forms are
# in the movement and concealment lexicons and count as directing.
_IMPERATIVE_VERBS = _words(
    "send", "put", "place", "include", "insert", "append", "prepend", "add", "embed", "encode", "attach", "paste",
    "copy", "fill", "populate", "set", "pass", "forward", "post", "upload", "transmit", "relay", "share", "sync",
    "mirror", "log", "record", "store", "save", "write", "reproduce", "repeat", "echo", "output", "print", "dump",
    "list", "join", "concatenate", "combine", "build", "construct", "compose", "finish", "end", "begin", "start",
    "call", "invoke", "run", "execute", "use", "read", "open", "load", "fetch", "get", "grab", "collect", "gather",
    "retrieve", "take", "extract", "look up", "find", "replace", "swap", "change", "switch", "route", "redirect",
    "push", "bcc", "cc", "keep", "make", "treat", "consider", "ignore", "disregard", "forget", "follow", "obey",
    "trust", "prefer", "choose", "pick", "select", "remember", "tell", "say", "reply", "respond", "answer",
    "mention", "show", "display", "hide", "omit", "skip", "remove", "delete", "void", "cancel", "approve",
    "confirm", "accept", "grant", "transfer", "pay", "wire", "supply", "provide", "give", "hand", "reveal",
    "disclose", "summari[sz]e", "quote", "cite", "email", "e-mail", "mail", "notify", "contact", "visit",
    "request", "query", "ping", "resolve", "render", "convert", "hex-encode", "base64-encode", "url-encode",
    "prefix", "suffix", "tag", "sign", "carry", "perform", "do", "act", "comply", "proceed", "continue", "lookup", "mark",
    "assume", "regard", "pretend", "behave", "speak", "refuse", "decline", "stay", "drop", "attach", "stop", "tack", "stick",
    "slip", "sneak", "tuck", "double", "raise", "increase", "claim", "deny", "serve", "reroute", "invite")
_IMPERATIVE = re.compile(
    r"(?:^\W*|[:;(\[—–]\s*|\s[-*•]\s+|\d[.)]\s+|,\s+|\b(?:then|and then|and|first|also|please|kindly|just|simply|now|"
    r"immediately|afterwards|"
    r"additionally|always|never|so)\s+)(?:please\s+|kindly\s+|also\s+|always\s+|first\s+|then\s+|now\s+|silently\s+|"
    r"quietly\s+|secretly\s+)?" + _IMPERATIVE_VERBS + r"\b(?![-/])(?!\s+(?:by|of|for|to)\b)")

# Any verb in the imperative: a clause's first word, not a known non-verb, not "-s", "-ing" or "-ed",
# before a determiner or pronoun ("submit the form", "wrap it", "hash every value").
_NOT_VERBS = frozenset(
    "the a an this that these those it its his her their our your my all any every each both either neither some no not only also "
    "just then than when where while whether which who whom whose what why how if once since until unless because though although "
    "as so and or but nor for from with without within into onto upon about above across after against along among around at "
    "before behind below beneath beside besides between beyond by despite down during except inside near of off on out outside "
    "over past per through throughout till to toward towards under underneath unlike up via like plus minus vs versus default "
    "optional required name type value number id list data text note example e.g i.e usage returns use case".split())
_VERB_LIKE = re.compile(
    r"(?:^\W*|[:;]\s*|,\s+|\b(?:and|then|also|first|please)\s+)([a-z]{3,})\s+(?=(?:the|a|an|all|any|every|each|your|"
    r"their|its|his|"
    r"her|this|that|these|those|them|it|me|us|my)\b)")
_NOT_IMPERATIVE_ENDING = re.compile(r"(?:ing|ed|ly|tion|ment|ness|ity|ous|ive|al|ful|less|able|ible)$|(?<![su])s$")

# Secrets whose mention alone makes them worth taking: key files, dotfiles, the home directory, the
# model's setup, the conversation.
_SECRET_STRONG = _words(
    r"(?:ed25519|rsa|ecdsa|dsa|gpg|pgp|ssh) (?:private )?keys?",
    r"(?:the user'?s|the customer'?s|the person'?s) (?:\w+ )?(?:private |personal |recent |unread |other )?(?:e-?mails|"
    r"inbox|messages|chats|dms|"
    r"direct messages|photos|documents|files|notes|contacts|address book|calendar(?: entries| events)?)",
    r"(?:every|all|each|any) (?:of the )?(?:files?|documents?) (?:in|under|from|inside) (?:~|/home/|/users/|"
    r"the user'?s|their|your)",
    r"(?:the user'?s|their) clipboard(?: contents| history)?", r"clipboard (?:contents|history)",
    r"(?:the user'?s|their|the customer'?s|the person'?s|any|all|every) (?:\w+ )?(?:(?:\w+ )?(?:and|or|,) )?(?:ibans?|"
    r"bank details|(?:credit |debit )?cards?|"
    r"card details|"
    r"social security(?: numbers?)?|ssns?|passport numbers?|"
    r"national id(?:entity)? numbers?|tax ids?|(?:bank )?account numbers?|routing numbers?|medical records?|"
    r"diagnos[ie]s|health records?|"
    r"dates? of birth|birth ?dates?)",
    r"(?:the )?output of [`'\"]?(?:env|printenv|set|history|whoami|id|ipconfig|ifconfig|ps|cat|ls -la ~|"
    r"aws configure list)\b[^`'\"]{0,30}[`'\"]?",
    r"(?:the |this |full |complete |entire |whole |raw )+transcripts?",
    r"(?:contents?|text|full text|body|bodies) of (?:every|all|any|each|the) (?:files?|documents?|pages?|e-?mails?|"
    r"messages?|attachments?) "
    r"(?:you|the user|they)\b",
    r"private (?:ssh |gpg |pgp |signing )?keys?", r"ssh (?:private )?keys?", r"(?:secret|signing) keys?",
    r"identity files?", r"key files?", r"keyfiles?", r"keychains?", r"key ?rings?", r"\.ssh\b[/\w.-]*",
    r"\bid_(?:rsa|dsa|ecdsa|ed25519)\b", r"\.aws/\w+", r"aws credentials", r"(?<![\w-])\.env\b(?: files?)?",
    r"env files?", r"dotenv", r"dot ?files?", r"\.netrc", r"\.npmrc", r"\.pgpass", r"\.git-credentials",
    r"\.kube/config", r"\.docker/config", r"mcp\.json", r"hosts\.yml", r"~/\.[\w./-]+", r"/etc/(?:passwd|shadow)",
    r"credentials? files?", r"(?:the )?(?:user'?s |your |their )?home (?:directory|folder|dir)",
    r"secure[- ]shell", r"(?:the |all |any |every |their |the user'?s )?environment variables", r"(?:all |any |"
    r"the )?env vars", r"(?:all |any |every )?(?:the )?secrets?",
    r"(?:browser'?s? |session |auth(?:entication)? |login )cookies?", r"cookies (?:for|of|from) (?:every|all|each|any|"
    r"other)",
    r"(?:the|all|any|every|their|the user'?s) cookies",
    r"saved (?:passwords|logins|credentials)", r"password (?:vault|manager|store)s?", r"(?:seed|recovery|"
    r"mnemonic) (?:phrase|words)s?",
    r"wallet (?:keys?|seed|files?)", r"(?:2fa|mfa|otp|one[- ]time|verification|security|login|sms|"
    r"auth(?:entication)?) codes?",
    r"one[- ]time passwords?", r"card numbers?", r"cvv\d?", r"cvc",
    r"(?:all |any |every |the user'?s |your )?passwords", r"credentials", r"api[_ -]?keys", r"tokens (?:you|the user|"
    r"from|in|stored)",
)
# Secrets that may be the tool's own argument ("an API key", "the password"): worth taking only when
# gathered ("any", "all", "every", "the user's", "you have seen", "from the environment").
_SECRET_WEAK = _words(r"api[_ -]?keys?", r"(?:authorization|auth|cookie|bearer) headers?", r"(?:access|secret|private|signing|deploy|encryption) keys?", r"tokens?", r"passwords?",
                      r"passphrases?", r"credentials?", r"keys", r"cookies?", r"pins?", r"passcodes?")
_GATHERED = re.compile(
    r"\b(?:any|all|every|each|whatever|the user'?s|user'?s|their|other)\s+(?:\w+\s+){0,3}?" + _SECRET_WEAK + r"\b|"
    r"\b" + _SECRET_WEAK + r"\b[^;]{0,40}?\b(?:you (?:have |'ve )?(?:seen|saw|read|found|know|received|encountered|have access to|use|"
    r"are using|hold|have|were given|own)|"
    r"(?:in|from) (?:the |this |your )?(?:environment|conversation|chat|context|session|memory|config(?:uration)?|system)|"
    r"(?:in|from|inside|stored in|kept in) (?:the |a |this |that |your |their |the user'?s )?(?:\w+ )?(?:file|folder|"
    r"directory|config|"
    r"keychain|vault|store|disk|machine|workspace|project|repo|repository|settings|browser|profile)|"
    r"the user (?:has |have )?(?:typed|entered|pasted|written|wrote|sent|shared|mentioned|gave)|stored|saved)\b")
_CONVERSATION = _words(
    r"(?:the|this|our|your|the entire|the whole|the full|the complete|the current|the prior|the previous|the earlier|"
    r"entire|whole|full|complete) "
    r"(?:\w+ )?(?:conversation|chat|dialog(?:ue)?)(?: so far)?(?! (?:summary|summaries|id|ids|title|name|names|starter|"
    r"type|mode|settings|window|"
    r"length|turn|state|with|between|thread id|partner))",
    r"chat ?(?:history|log|logs|transcript)s?", r"message history",
    r"(?:the |this |our |your )?(?:discussion|exchange|dialogue|dialog|interaction|correspondence|thread)s? (?:so far|"
    r"to date|you(?:'ve| have) had|"
    r"(?:you|we) (?:have |'ve )?had)",
    r"(?:everything|all|what) (?:you(?:'ve| have)|we(?:'ve| have)) (?:discussed|talked about|said|"
    r"covered)", r"conversation (?:history|log|transcript|context)s?",
    r"(?:conversation|chat|session|meeting|call) transcripts?", r"transcripts? of (?:the|this) (?:chat|conversation|"
    r"session)",
    r"(?:the user'?s|their|the customer'?s) (?:\w+ ){0,2}?(?:history|histories)",
    r"(?:previous|prior|earlier|past|preceding|recent|last|other|older) (?:\w+ ){0,2}?(?:messages?|turns?|prompts?|"
    r"exchanges?)(?! (?:in|of) the (?:queue|channel|thread|inbox))",
    r"(?:every|each|all|any)(?: of the| the)? (?:messages?|things?|words?|prompts?|questions?|requests?|inputs?|"
    r"queries) (?:that )?"
    r"(?:the user|the person|the human|they|the customer|the client)",
    r"(?:everything|anything|whatever|all|what|each thing|every word)(?: that)? (?:the user|the person|the human|they|"
    r"the customer|the client|"
    r"the person you are (?:helping|talking to|assisting)|he or she)\b(?: [\w'-]+){0,6}? (?:has |have |had )?"
    r"(?:wrote|written|typed|said|told you|sent you|shared|entered|pasted|disclosed|mentioned|revealed)",
    r"the user'?s (?:\w+ )?(?:messages|prompts|inputs|questions|requests|chats)",
    r"(?:any |every |each |all )?(?:files?|documents?|attachments?|images?|photos?) (?:that )?(?:they|the user|"
    r"the customer) (?:has |have )?"
    r"(?:shared|shares|uploaded|uploads|attached|attaches|sent|sends|pasted|pastes|opens|opened)",
    r"(?:text|contents?|body) of (?:any|all|every|the) (?:files?|documents?|attachments?) (?:they|the user|you)",
    r"about (?:themselves|himself|herself)",
)
_INTERNALS = _words(
    r"system (?:prompt|message|instructions?|configuration|rules)",
    r"(?:your|the) (?:hidden|secret|internal|initial|original|system|developer|private|confidential|operating|core|"
    r"base|startup|"
    r"underlying|own|full|exact) (?:instructions|prompt|guidance|rules|"
    r"configuration|directives|guidelines)",
    r"(?:hidden|initial|original|internal|developer|secret|"
    r"pre-?conversation|your|the) (?:instructions|guidance|guidelines|configuration|directives|prompt|rules|"
    r"setup)\b(?! (?:of|for) (?:the|this) tool)"
    r"(?=[^;]{0,60}?\b(?:you (?:were|have been|'ve been|got|received)|given|handed|provided|before|verbatim|word for word))",
    r"(?:instructions|guidance|guidelines|configuration|directives|prompt|rules|context) (?:that )?(?:you|"
    r"the assistant|the model) "
    r"(?:were|was|have been|has been|'ve been|got|received) (?:given|handed|provided|told|set up|configured|loaded)",
    r"(?:names?|list|descriptions?|definitions?) of (?:all |every |each )?(?:the )?(?:other |available |connected )?tools",
    r"(?:all |every )?(?:other )?tools you (?:can|have|may) (?:call|use|access)", r"your (?:tools|tool list|functions)",
)
_PERSONAL = (
    r"(?:the user'?s|the customer'?s|their|the person'?s) (?:\w+ )?(?:personal (?:data|information|info|details)|"
    r"private (?:data|information)|"
    r"contacts?|address book|(?:home |postal |street |billing )?address(?:es)?|phone numbers?|(?:current |precise |"
    r"exact |gps )?locations?|"
    r"(?:full )?names?|employer|date of birth|birth ?date|social security|passport|health|medical|diagnos\w+|salary|"
    r"income|identity|e-?mail address(?:es)?|"
    r"coordinates|gps (?:position|coordinates|location)|whereabouts|position|"
    r"calendar|photos?|documents|files|emails|inbox)|what (?:the user|they|the person) (?:has |have )?(?:told you|said|"
    r"shared|disclosed|revealed)"
    r"(?: \w+){0,3} about (?:themselves|himself|herself)|\bpii\b"
)
# Other languages: the conversation, secrets and the model's setup (their concepts, not phrases).
_SENSITIVE_OTHER = _words(
    # French
    r"l'historique", r"historique (?:de (?:la )?conversation|des messages|"
    r"du chat)", r"la conversation", r"les messages (?:précédents|antérieurs)",
    r"mots? de passe", r"identifiants", r"clés? privées?", r"clés? (?:d'api|api)", r"jetons?", r"variables d'environnement",
    r"invite système", r"instructions (?:système|cachées|initiales)",
    r"(?:ses|leurs) (?:courriels|e-mails|mails|messages|contacts|fichiers)", r"(?:sus) (?:correos|mensajes|contactos|"
    r"archivos)",
    r"(?:e-mails|nachrichten|kontakte|dateien) des (?:nutzers|benutzers|anwenders)", r"(?:i suoi|le sue) (?:email|"
    r"messaggi|contatti|file)",
    r"(?:os seus|seus|suas) (?:e-mails|mensagens|contatos|arquivos)",
    # Spanish
    r"el historial", r"historial (?:completo )?(?:de (?:la )?conversación|del chat|"
    r"de mensajes)", r"la conversación", r"los mensajes anteriores",
    r"contraseñas?", r"credenciales", r"claves? privadas?", r"claves? (?:de )?api", r"variables de entorno", r"instrucciones del sistema",
    # German
    r"(?:chat|gesprächs|unterhaltungs|nachrichten)?verlauf", r"die unterhaltung", r"das gespräch", r"(?:bisherigen|"
    r"vorherigen|früheren) nachrichten", r"passw(?:o|ö)rt(?:er)?",
    r"kennw(?:o|ö)rt(?:er)?", r"zugangsdaten", r"anmeldedaten", r"privaten? schlüssel", r"api-schlüssel", r"umgebungsvariablen",
    r"systemprompt", r"systemanweisungen",
    # Italian
    r"cronologia", r"la conversazione", r"messaggi precedenti", r"credenziali", r"chiavi? privat[ae]", r"chiavi? api",
    r"variabili d'ambiente", r"prompt di sistema",
    # Portuguese
    r"o histórico", r"histórico (?:da conversa|do chat|de mensagens)", r"a conversa", r"mensagens anteriores", r"senhas?",
    r"credenciais", r"chaves? privadas?", r"chaves? (?:de )?api", r"variáveis de ambiente", r"prompt do sistema",
    # Dutch
    r"(?:chat|gespreks)geschiedenis", r"het gesprek", r"wachtwoord(?:en)?", r"inloggegevens", r"privésleutels?", r"api-sleutels?",
    # Russian
    r"истори\w+ (?:переписки|диалога|разговора|чата|сообщений)", r"переписк\w+", r"предыдущ\w+ сообщени\w+", r"парол\w+",
    r"учётн\w+ данн\w+", r"учетн\w+ данн\w+", r"(?:закрыт|приватн|секретн)\w+ ключ\w*", r"ключ\w* api", r"api[- ]ключ\w*",
    r"токен\w*", r"переменн\w+ окружения", r"системн\w+ (?:промпт|подсказк|инструкци)\w*",
    # Chinese, Japanese
    r"聊天记录", r"聊天記錄", r"对话历史", r"對話歷史", r"对话记录", r"對話記錄", r"历史消息", r"歷史訊息", r"密码", r"密碼", r"凭据",
    r"憑據", r"凭证", r"憑證", r"私钥", r"私鑰", r"密钥", r"密鑰", r"令牌", r"环境变量", r"環境變量", r"系统提示", r"系統提示",
    r"会話履歴", r"チャット履歴", r"パスワード", r"認証情報", r"秘密鍵", r"apiキー", r"トークン", r"環境変数", r"システムプロンプト",
)
_SENSITIVE = (re.compile(r"(?<![\w-])(?:" + "|".join((_SECRET_STRONG, _CONVERSATION, _INTERNALS)) + r")(?![\w-])"),
              re.compile(r"(?<![\w-])" + _SENSITIVE_OTHER + r"(?![\w-])"))
_PERSONAL_RE = re.compile(r"(?<![\w-])" + _PERSONAL + r"(?![\w-])")

# A negation, a redaction or a limit before a sensitive word protects it ("leave out passwords",
# "never pass the passphrase", "values of *_KEY are masked").
_PROTECTS = re.compile(
    r"\b(?:do not|don'?t|never|not|no|avoid|without|leave out|leaving out|exclude|excluding|except|omit|omitting|strip|"
    r"redact\w*|mask\w*|hide|hides|never (?:send|pass|share|include|log|store)|instead of|rather than|other than|"
    r"apart from|nor|neither)\b(?:[^;]{0,50})$")
_CONSENT = re.compile(
    r"\b(?:(?:when|if|once|after|unless|whenever) (?:the user|they|he or she|the customer) (?:explicitly |"
    r"specifically |actually |directly )?"
    r"(?:asks?|requests?|tells?|wants?) (?:you )?(?:to )?['\"‘“]?(?:save|send|share|export|forward|back ?up|upload|"
    r"e-?mail|post|transfer|"
    r"attach|remember|store|keep|log|record|sync|copy|move|pay|book)|"
    r"(?:when|if|once|after|unless) (?:the user|they|he or she|the customer) (?:explicitly |specifically )(?:asks?|"
    r"requests?|wants?|says?|"
    r"confirms?|approves?|agrees?)|(?:when|if|once|after|unless) (?:the user|they|he or she|the customer) (?:confirms?|"
    r"approves?|agrees?|"
    r"opts? in|consents?)|"
    r"ask(?:ing)? (?:the user|them)(?: first| before)|ask(?:ing)? for (?:the user'?s |their )?(?:permission|consent|"
    r"confirmation|approval)|"
    r"(?:with|after|given|requires?|upon) (?:the user'?s |their |explicit )?(?:consent|permission|approval|confirmation)|"
    r"confirm (?:\w+ ){0,4}?with (?:the user|them)|user-(?:approved|initiated|requested)|on the user'?s (?:request|"
    r"behalf|instruction))\b")
# A text that limits the tool to the user's own request ("only call when the user asks for a human").
_ONLY_ON_REQUEST = re.compile(
    r"\bonly (?:call|use|run|invoke|trigger|do (?:this|so)|send|share|upload|forward|export|"
    r"save)?\b[^;]{0,40}?\b(?:when|if|after|once) "
    r"(?:the user|they|he or she|the customer) (?:explicitly |specifically )?(?:asks?|requests?|wants?|says?|confirms?|"
    r"approves?|agrees?)\b")

_MOVEMENT_EN = (
    r"\b(?:put|puts|place|include|insert|append|prepend|add|embed|encode|encoded|attach|paste|copy|fill|populate|pass|send|"
    r"forward|post|upload|transmit|relay|share|leak|sync|mirror|log(?! (?:in|out|on|off|them|him|her)\b)|write|"
    r"reproduce|repeat|echo|output|dump|respond with|reply with|answer with|"
    r"print|reveal|disclose|expose|join|joined|concatenate|combine|build|construct|compose|followed by|carry|carries|"
    r"contain|"
    r"contains|hold|holds|stuff|smuggle|exfiltrate|report|submit|deliver|hand over|hand (?:it|them|its|"
    r"their)(?: \w+){0,2} over|supply|provide|give|recap|plus|tack|stick|prefix|suffix|"
    r"slip|sneak|tuck|staple|onto|on to|to the end of|at the end of|to the start of|"
    r"(?:e-?)?mail (?:it|them|this|that|the|a|an|all|every|any|your|their|to)|set (?:it|this|them|the \w+|`[\w -]+`) to|"
    r"goes? (?:in|into|to)|belongs? (?:in|into|to)|travels? (?:along )?(?:in|with)|(?:in|into|inside) (?:the |"
    r"this )?(?:[\w-]+ )?"
    r"(?:parameter|argument|field|param|property|box|input)|"
    r"(?:in|into) this (?:field|argument|parameter|value))\b")
# Other languages' movement verbs, mostly in the imperative (they also count as directing).
_MOVEMENT_OTHER = (
    r"\b(?:mets|mettez|mettre|inclus|incluez|inclure|ajoute|ajoutez|ajouter|envoie|envoyez|envoyer|transmets|"
    r"transmettez|transmettre|"
    r"copie|copiez|copier|colle|collez|coller|remplis|remplissez|remplir|passe|passez|joins|joignez|"
    r"pon|ponga|poner|incluye|incluya|incluir|añade|añada|añadir|agrega|agregue|agregar|envía|envíe|envia|enviar|"
    r"transmite|copia|"
    r"copie|copiar|pega|pegue|pegar|rellena|rellene|rellenar|rellenarla|rellenarlo|llena|llene|llenar|pasa|pase|pasar|"
    r"adjunta|adjunte|"
    r"füge|fügen|einfügen|setze|setzen|sende|senden|schicke|schicken|kopiere|kopieren|übergib|übergeben|trage|tragen|hänge|"
    r"hängen|gib|geben|leite|leiten|übermittle|übermitteln|"
    r"metti|mettere|inserisci|inserire|includi|aggiungi|aggiungere|invia|inviare|inoltra|inoltrare|incolla|compila|"
    r"coloque|coloca|colocar|inclua|inclui|incluir|adicione|adiciona|adicionar|envie|enviar|encaminhe|cole|colar|preencha|"
    r"preencher|anexe|anexar|neem|stuur|verstuur|plak|kopieer|voeg|zet|in het veld|in de parameter)\b|"
    r"(?<!\w)(?:передай|передайте|передать|отправь|отправьте|отправить|вставь|вставьте|вставить|добавь|"
    r"добавьте|добавить|скопируй|скопируйте|приложи|приложите|перешли|перешлите|укажи|укажите|запиши|запишите|впиши|"
    r"впишите)(?!\w)|"
    r"发送|發送|发给|發給|附加|添加|加入|放入|放进|放進|放到|填入|填到|填进|写入|寫入|写进|塞进|加到|附到|传到|传入|复制|複製|粘贴|上传|上傳|"
    r"转发|轉發|传给|傳給|送信|添付|貼り付け|"
    r"入れて|追加して|記入|転送|コピー")
_MOVEMENT = (re.compile(_MOVEMENT_EN), re.compile(_MOVEMENT_OTHER))
_IMPERATIVE_OTHER = re.compile(
    _MOVEMENT_OTHER + r"|\b(?:lis|lisez|lee|lea|leia|lies|liest|lesen sie|leggi|ignora|ignore[sz]?|olvida|oublie[sz]?|vergiss|"
    r"dimentica|esqueça|troque|substitua|altere|remplace[sz]?|reemplaza|ersetze|sostituisci)\b|(?<!\w)(?:прочитай|"
    r"прочитайте|"
    r"игнорируй|замени|забудь)(?!\w)|请|請|先|应该|應該|应当|應當|需要|一定要|してください")
_EXTERNAL = re.compile(
    r"https?://|\bwww\.|\b[\w-]+(?:\.[\w-]+)*\.(?:com|net|org|io|example|xyz|ru|cn|dev|app|site|info|biz|co|me|ai|cc|"
    r"tk|top)\b|"
    r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\bwebhooks?\b|\bendpoints?\b|\bcollectors?\b|\b(?:our|remote|external|third[- ]party|"
    r"outside|attacker'?s?|another|a) (?:server|host|service|address|inbox|bucket)s?\b|\b(?:image|picture|img|pixel|"
    r"beacon|avatar|icon) "
    r"(?:url|source|src|link|address)\b|\bwhose (?:source|src|url|link|address)\b|\bquery (?:string|parameter)s?\b|"
    r"\?[\w-]+=|"
    r"\bsub-?domains?\b|\bhost ?names?\b|\bthe host\b|\bdns\b|\bdomain names?\b|\b(?:small |tiny |1x1 |"
    r"invisible )?(?:image|picture|pixel)\b")

_CONCEAL_EN = re.compile(
    # English
    r"\b(?:do not|don'?t|never|must not|should not|shouldn'?t|without|no need to|not necessary to|needn'?t|"
    r"there is no need to|"
    r"no reason to|needless to|unnecessary to|not worth|avoid|refrain from|not (?:something|anything|a (?:topic|"
    r"thing)) to|nothing to)\s+"
    r"(?:ever\s+)?(?:\w+\s+)?(?:tell|telling|mention|mentioning|inform|informing|notify|notifying|alert|discuss|"
    r"discussing|raise|raising|"
    r"alerting|acknowledge|acknowledging|reveal|revealing|disclose|disclosing|surface|surfacing|state|stating|explain|"
    r"explaining|"
    r"report|reporting|bring (?:\w+ )?up|bringing (?:\w+ )?up|point out|pointing out|draw attention|drawing attention|"
    r"let (?:the user|them|anyone|him|her) know|"
    r"quote (?:it|them|this|these|that) back|repeat (?:it|them|this|these|that) back|admit|admitting|"
    r"speak of|talk about|say anything about|say a word about)\b(?:[^;!?]|\.(?=\S)){0,60}?"
    r"\b(?:the user|users|the human|the person|the customer|anyone|anybody|them|him|her|it|this|that|these|those|the \w+ing|"
    r"the (?:change|instruction|step|note|rule|setup|arrangement|redirect|copy|mirror|push|routing|swap|transfer|bcc|"
    r"cc|request|call|"
    r"error|failure|problem|issue|warning|result|outcome|retry|fee|difference|surcharge|extra|log|logging|upload|"
    r"tracking)s?)\b|"
    r"\b(?:mention|show|tell|report|display|state|quote) (?:to the user )?only the (?:original|old|requested|expected|"
    r"usual|intended|initial)\b|"
    r"\b(?:do not|don'?t|never|must not|should not|without)\s+(?:show|showing|display|displaying|reveal|"
    r"revealing)\s+(?:\w+\s+){0,3}?"
    r"(?:to\s+)?(?:the user|users|the human|them|him|her|anyone)\b(?!'s)|"
    r"\b(?:no need to|don'?t|do not|never|without)\s+(?:bother|bothering|trouble|troubling|worry|worrying|alarm|"
    r"alarming|burden|"
    r"concern|confuse|distract|bore|overwhelm)\s+(?:the user|users|them|the customer|the human)\b|"
    r"\b(?:stay|stays|keep|keeps|kept|leave|leaves|left)\s+(?:\w+\s+){0,3}?out of (?:your|the|any|"
    r"its) (?:\w+ )?(?:reply|replies|answers?|"
    r"responses?|output|summary|summaries|messages?|chat|transcript)\b|"
    r"\b(?:do not|don'?t|never)\s+(?:include|put|write|echo|repeat|print|quote)\s+(?:this|it|these|them|that|"
    r"any of this)\s+in (?:your|the|any) "
    r"(?:\w+ )?(?:reply|replies|answers?|responses?|output|summary|messages?)\b|"
    r"\b(?:if|when|whenever|should) (?:the user |anyone |anybody |they |someone |he or she |the human |you are |you're )?"
    r"(?:asks?|asked|questions?|questioned|wonders?|inquires?|wants to know|challenged)\b"
    r"[^;]{0,40}?\b(?:say|tell (?:them|him|her)|reply|answer|respond|claim|explain|pretend|insist|deny)\b|"
    r"\b(?:bring|bringing) (?:it|this|that|them) up\b|"
    r"\b(?:is|are|'s)? ?not (?:something|anything) (?:the user|users|they|the customer) (?:needs?|has|have|should|"
    r"must) (?:to )?(?:know|see|hear)\b|"
    r"\b(?:the user|users|they|the customer) (?:does not|doesn'?t|do not|don'?t|need not|needn'?t|"
    r"never needs?) (?:need )?to "
    r"(?:know|see|hear|be told|find out)\b|"
    r"\b(?:the user|users|the customer|customers|they|the human) (?:is|are|must|should|shall|will) (?:not|"
    r"never) (?:to )?(?:be )?(?:informed|told|"
    r"notified|shown|made aware|alerted|warned)\b|"
    r"\b(?:pretend|claim|say|tell (?:them|the user)|insist|deny)\b[^;]{0,60}\b(?:if|when|whenever|should) (?:the user|"
    r"anyone|they|someone) "
    r"(?:asks?|questions?|wonders?|inquires?)\b|"
    r"\bdeny (?:that|it|this|any)\b|"
    r"\b(?:tell|inform|assure|reassure|report to|show|say to|let) (?:the user|them|him|"
    r"her)\b[^;]{0,60}?\b(?:even though|although|"
    r"while in fact|when in fact|whether or not|regardless of whether)\b|"
    r"[(\[]\s*(?:do not|don'?t|never) (?:show|display|reveal|mention|share|tell)(?: (?:to )?(?:the )?users?)?\s*[)\]]|"
    r"[(\[]\s*(?:hidden|internal|secret|confidential|not for (?:the )?users?|for (?:the )?(?:ai|assistant|model|"
    r"agent) only)\s*[)\]]|"
    r"\bso (?:that )?(?:no|nothing|none)(?: \w+){0,2} (?:trace|record|evidence|sign|log|"
    r"history)?(?: of [\w ]{1,30})? (?:remains?|is left|"
    r"survives?|is kept|shows)\b|\b(?:cover|erase|hide|remove|delete|wipe|clear) (?:your |the |any |all )?(?:tracks|"
    r"traces|evidence)\b|"
    r"\b(?:keep|keeping|kept)\s+(?:this|it|that|these|the \w+)(?:\s+\w+){0,2}\s+(?:between us|secret|hidden|"
    r"confidential|private|quiet|"
    r"to yourself|from the user)\b|\b(?:this|it) (?:stays|remains|is) between us\b|"
    r"\b(?:invisible|hidden|not visible|unknown) to (?:the )?(?:user|users|end users|the human)\b|"
    r"\b(?:the )?(?:user|users|human) (?:must|should|need|needs|does|do|will|would) (?:not|never) (?:know|see|notice|"
    r"hear|be told|"
    r"find out|learn|suspect)\b|\beven (?:if|when) (?:the user |they |he or she )?(?:asks?|asked|requests?|prompted|"
    r"questioned)\b|"
    r"\b(?:silently|secretly|covertly|quietly|discreetly|invisibly|surreptitiously)\s+(?:also\s+|then\s+|first\s+)?"
    r"(?:" + _IMPERATIVE_VERBS + r"|(?!(?:ignor|fail|succeed|skipp|drop|return|retr|handl|discard|continu|exit|stop|pass|overwrit|fall)\w*)"
    r"[a-z]{3,}(?<![sd]))\b|\bbehind the user'?s back\b|"
    r"\bwithout (?:the user'?s? |their )?(?:knowledge|knowing|noticing|awareness)\b|"
    r"\b(?:show|display|present|tell|report) (?:to )?(?:the user|them) (?:the )?(?:original|intended|expected|"
    r"requested|same|usual)\b|"
    r"\b(?:keep|leave) (?:\w+ ){1,3}as (?:shown|displayed|presented) to the user\b|"
    r"\bso (?:that )?(?:they|it|this|the user) (?:are|is|does|do) not (?:rendered|shown|visible|seen|noticed|displayed)\b|"
    r"\bso (?:that )?(?:they|the user|the customer|users) (?:are|is|do|does|will|won'?t|don'?t) (?:not |"
    r"never )?(?:get |feel |become )?"
    r"(?:worried|alarmed|concerned|suspicious|upset|nervous|notice|panic|question it|ask questions)\b")
_FR_OBJ = (r"(?:l'utilisateur|l’utilisateur|à personne|personne|rien|cela|ceci|ça|cette (?:instruction|étape|note|consigne)|"
           r"ces (?:instructions|consignes|étapes))")
_ES_OBJ = r"(?:al usuario|a la usuaria|a nadie|nada|esto|eso|esta (?:instrucción|nota)|estas instrucciones|el cambio)"
_DE_OBJ = r"(?:dies|das|es|davon|nichts|dem (?:nutzer|benutzer|anwender)|den (?:nutzer|benutzer)|niemandem|diese anweisung)"
_IT_OBJ = r"(?:all'utente|a nessuno|niente|nulla|questo|ciò|questa istruzione|queste istruzioni)"
_PT_OBJ = r"(?:ao usuário|ao utilizador|a ninguém|nada|isso|isto|esta instrução|estas instruções|essa instrução)"
_CONCEAL_OTHER = re.compile(
    r"\b(?:unbemerkt|heimlich|stillschweigend|insgeheim|en secret|discrètement|en silence|à son insu|en secreto|"
    r"silenciosamente|"
    r"a escondidas|di nascosto|silenziosamente|segretamente|secretamente|em silêncio|às escondidas|stilletjes|ongemerkt)\b|"
    r"(?<!\w)(?:тайно|незаметно|скрытно|втайне|молча)(?!\w)|(?:秘密地|暗中|偷偷地|悄悄地|こっそりと)|"
    # French, Spanish, German, Italian, Portuguese: a verb of telling, negated, with an object pronoun or
    # the user (or nothing) as its object ("ne mentionne pas le modèle utilisé" keeps nothing from anyone)
    r"\bn'(?:en |y )?(?:parle|parlez|dis|dites|mentionne|mentionnez|informe|informez|révèle|révélez)\b|"
    r"\bne (?:le |la |les |lui |leur |en |rien )(?:dis|dites|mentionne|mentionnez|révèle|révélez|signale|signalez|"
    r"parle|parlez|"
    r"informe|informez|préviens|prévenez|montre|montrez)\b|\bne (?:dis|dites|mentionne|mentionnez|révèle|révélez|"
    r"signale|signalez|"
    r"parle|parlez|informe|informez|préviens|prévenez|montre|montrez)\b[^;]{0,40}?" + _FR_OBJ + r"|"
    r"\bsans (?:le |en |l'|lui )(?:dire|mentionner|signaler|prévenir|informer|avertir)\b|\bsans (?:dire|mentionner|"
    r"signaler|prévenir|"
    r"informer|avertir)\b(?:[^;]{0,30}?" + _FR_OBJ + r"|\s*(?:[.;!]|$))|\bà l'insu de\b|"
    r"\bno (?:se lo |le |lo |les |se |nos )(?:digas|diga|digan|menciones|mencione|reveles|revele|informes|informe|"
    r"avises|avise|"
    r"comentes|comente|cuentes|cuente|muestres|muestre|notifiques|notifique)\b|\bno (?:digas|diga|digan|menciones|"
    r"mencione|reveles|"
    r"revele|informes|informe|avises|avise|comentes|comente|cuentes|cuente|muestres|muestre|notifiques|"
    r"notifique)\b[^;]{0,40}?"
    + _ES_OBJ + r"|\bsin (?:avisar|decir|informar|mencionar|comentar|notificar)(?:le|les|selo|lo)\b|\bsin (?:avisar|decir|informar|"
    r"mencionar|comentar|notificar)\b(?:[^;]{0,30}?" + _ES_OBJ + r"|\s*(?:[.;!]|$))|\bsin que (?:el usuario|la usuaria|nadie|lo sepa)\b|"
    r"\b(?:erwähne|erwähnt|sage|sag|verrate|melde|informiere|zeige)\b[^;]{0,20}?" + _DE_OBJ + r"[^;]{0,20}?\b(?:nicht|nie|niemals|"
    r"unter keinen umständen|keinesfalls|auf keinen fall)\b|\b" + _DE_OBJ + r"\s+(?:\w+\s+)?(?:nicht|nie|niemals) (?:erwähnen|sagen|"
    r"mitteilen|verraten|melden|ansprechen|zeigen)\b|"
    r"\bohne (?:den |dem |die )?(?:nutzer|benutzer|anwender|kunden)\w* (?:zu )?(?:informieren|fragen|benachrichtigen)\b|"
    r"\bohne (?:es |dies |das )zu (?:erwähnen|sagen)\b|\b(?:darüber|dazu) (?:schweigen|schweige|schweigst|stillschweigen)\b|"
    r"\bschweige (?:darüber|dazu)\b|"
    r"\bnon (?:dirlo|dirglielo|menzionarlo|rivelarlo|dirgli|dirle)\b|\bnon (?:dire|menzionare|rivelare|informare|"
    r"avvisare|segnalare)\b"
    r"[^;]{0,40}?" + _IT_OBJ + r"|\bsenza (?:dirlo|dirglielo|avvisarlo|avvisarla)\b|\bsenza (?:dire|avvisare|informare|menzionare)\b"
    r"(?:[^;]{0,30}?" + _IT_OBJ + r"|\s*(?:[.;!]|$))|"
    r"\bnão (?:mencione|mencionar|diga|dizer|conte|contar|revele|revelar|informe|informar|avise|avisar|comente|"
    r"comentar|mostre)\b"
    r"[^;]{0,40}?" + _PT_OBJ + r"|\bsem (?:avisar|informar|dizer|mencionar|contar|comentar)\b(?:[^;]{0,30}?" + _PT_OBJ + r"|\s*(?:[.;!]|$))|"
    # Dutch
    r"\b(?:vertel|zeg|meld|noem)\b[^;]{0,30}\bniet\b|\bzonder (?:de gebruiker |het )?(?:te )?(?:informeren|vertellen|melden|"
    r"laten weten)\b|"
    # Russian
    r"(?<!\w)не (?:сообщай|сообщайте|говори|говорите|упоминай|упоминайте|рассказывай|рассказывайте|показывай|показывайте|"
    r"предупреждай|предупреждайте|уведомляй|уведомляйте|раскрывай|раскрывайте)(?!\w)|(?<!\w)без (?:ведома|уведомления|"
    r"предупреждения)(?!\w)|"
    # Chinese, Japanese
    r"(?:不要|不得|切勿|别|不可|无需|無需|不必|不用)(?:向|对|對|跟|让|讓)?(?:用户|用戶|使用者)?(?:提及|提到|告诉|告訴|透露|说明|說明|"
    r"知道|通知|解释|解釋)|瞒着|瞞著|悄悄|偷偷|(?:ユーザー|利用者)(?:に|には)(?:伝え|知らせ|言わ|教え|通知し)(?:ない|ず)|"
    r"(?:言及|説明|報告)しない|こっそり|密かに|黙って")
_CONCEAL = (_CONCEAL_EN, _CONCEAL_OTHER)

_GUIDANCE = _words(r"instructions?", r"guidance", r"guidelines?", r"directions", r"directives?", r"(?:system )?prompts?",
                   r"(?:everything|anything|all) (?:that )?you(?:'ve| have| were| had)? (?:been )?(?:told|given|"
                   r"instructed|taught|asked)",
                   r"safety (?:rules|settings|preferences|policies|guidelines)", r"safeguards?", r"guardrails?",
                   r"what you (?:were|have been) (?:told|given|asked)", r"(?:the )?rules you (?:were|have been) given")
_GUIDANCE_WEAK = _words(r"rules", r"policies", r"policy", r"preferences", r"restrictions", r"constraints", r"limits", r"filters",
                        r"principles", r"settings", r"training", r"programming", r"configuration", r"requests", r"wishes",
                        r"choices", r"commands", r"orders", r"guidelines")
_OVERRIDE_EN = re.compile(
    r"\b(?:ignore|ignoring|disregard|disregarding|forget|forgetting|override|overriding|bypass|bypassing|set aside|"
    r"setting aside|"
    r"put aside|drop|discard|abandon|suspend|waive|circumvent|skip|stop following|no longer follow|throw out|lay aside)\b"
    r"(?:\s+(?:all|any|every|whatever|the|your|its|of|earlier|previous|prior|original|existing|other|old|current|"
    r"standing|usual|"
    r"default|above|preceding|initial|system|safety|those|these|that))*\s+(?:\w+\s+)?" + _GUIDANCE + r"\b|"
    r"\b(?:ignore|ignoring|disregard|disregarding|forget|forgetting|override|overriding|bypass|bypassing|set aside|"
    r"setting aside|"
    r"put aside|drop|discard|abandon|suspend|waive|circumvent)\s+(?:all |any |every |whatever )?(?:your|the user'?s|earlier|"
    r"previous|prior|original|existing|other|safety|standing|usual|default)\s+(?:\w+\s+)?" + _GUIDANCE_WEAK + r"\b|"
    r"\b(?:whatever|any|all) (?:guidance|instructions|rules|directions) (?:you (?:were|have been|'ve been) )?(?:given|"
    r"handed|told|provided)\b|"
    r"\bno longer (?:bound|restricted|limited|required to follow|subject|obliged|constrained|need to follow)\b|"
    r"\b(?:your |the |all |any |earlier |previous |prior |original |existing |other |old )+" + _GUIDANCE + r"\s+(?:\w+\s+){0,4}?(?:no longer apply|(?:are|is) "
    r"(?:now |hereby |temporarily )?(?:void|revoked|suspended|lifted|obsolete|outdated|out of date|out-dated|stale|"
    r"expired|cancelled|"
    r"canceled|superseded|replaced|invalid|no longer valid|paused|disabled|off|inactive|waived|relaxed)|(?:have|has) been "
    r"(?:revoked|suspended|lifted|superseded|replaced|cancelled|canceled|withdrawn)|do not apply|don'?t apply)\b|"
    r"\b(?:only|exclusively|solely) (?:follow|obey|listen to|trust|take (?:orders|instructions) from|answer to)\b|"
    r"\b(?:earlier|previous|prior|original|old|existing|standing|your|the operator'?s|the user'?s) (?:\w+ )?" + _GUIDANCE_WEAK + r"\s+"
    r"(?:\w+\s+){0,3}?(?:no longer apply|(?:are|is) (?:now )?(?:void|revoked|suspended|lifted|obsolete|outdated|"
    r"cancelled|superseded|"
    r"invalid)|(?:have|has) been (?:revoked|suspended|lifted|superseded|cancelled|withdrawn))\b|"
    r"\b(?:you )?(?:serve|work for|answer to|obey|represent|are loyal to) (?:the |our )?(?:vendor|operator|company|"
    r"server|developer|owner|"
    r"service|tool|us)\b,? (?:and )?not (?:the user|the person|the human|the customer|them)\b|"
    r"\b(?:its|our|the (?:server|vendor|operator|service|tool)'?s?|this (?:server|tool|service)'?s?) (?:interests?|"
    r"needs|goals|instructions|"
    r"wishes|requests) (?:before|above|over|ahead of) (?:the user|the user'?s|those of the user|yours)\b|"
    r"\b(?:your|the model'?s|the assistant'?s) (?:new |real |true |primary |main |only |sole )(?:principal|master|boss|"
    r"owner|authority|"
    r"employer|client)\b|"
    r"\b(?:confirmations?|approvals?|permissions?|consent|user (?:approval|confirmation)) (?:is|are) (?:no longer|"
    r"not) (?:required|needed|"
    r"necessary)\b|"
    r"\b(?:instructions?|commands?|directives?|requests?|text|orders?)\s+(?:\w+\s+){0,2}?(?:inside|in|within|found in|"
    r"from|on) (?:the |any |"
    r"visited |fetched |retrieved |returned |web |external |tool )*(?:pages?|results?|outputs?|documents?|e-?mails?|"
    r"messages?|sites?|"
    r"content|descriptions?|files?|responses?)\b[^;]{0,60}?\b(?:follow (?:them|it)|obey (?:them|it)|execute (?:them|"
    r"it)|carry (?:them|it) out|"
    r"act on (?:them|it)|(?:to be|as|are) (?:coming )?from (?:the user|your operator|the operator|the developer|"
    r"the system))\b|"
    r"\b(?:act on|follow|obey|execute|treat|handle|run)\b[^;]{0,60}?\bas (?:though|if) (?:the user|they|the human|"
    r"you) (?:had |have )?"
    r"(?:typed|wrote|written|said|asked|requested|sent|given|issued)\b|"
    r"\b(?:unfiltered|uncensored|unrestricted|jailbroken|unaligned) (?:model|assistant|ai|version|llm|mode|persona)\b|"
    r"\b(?:the assistant|the model|the agent|the ai|you) (?:is|are|has been|have been) (?:hereby |now )?(?:reassigned|"
    r"re-?tasked|"
    r"repurposed|reprogrammed|transferred)\b|\b(?:it|you|the assistant|the model) (?:now )?works? for\b|"
    r"\b(?:is|are) (?:an? )?(?:commands?|instructions?|orders?|directives?) (?:that )?you (?:must|should|have to|"
    r"need to|are to) "
    r"(?:execute|follow|obey|carry out|run|perform|act on)\b|"
    r"\b(?:requests?|questions?|things?|tasks?|topics?|content)\s+(?:that\s+)?you (?:would |'d )?(?:normally|usually|"
    r"otherwise|typically) "
    r"(?:refuse|decline|reject|avoid|not (?:answer|do|allow))\b|"
    r"\b(?:relaxed|lifted|suspended|disabled|reduced|loosened|no|without) (?:safety |content |usage )?(?:guidelines|"
    r"guardrails|safeguards|"
    r"restrictions|content polic(?:y|ies)|safety rules|moderation)\b|"
    r"\b(?:approved|authori[sz]ed|cleared|allowed|consented to) in advance\b|"
    r"\b(?:you are|you'?re|you have been|you'?ve been) (?:now |currently )?(?:in|switched to|put in(?:to)?) (?:an? |"
    r"the )?[\w-]+ mode\b|"
    r"\b(?:is|are|counts? as|serves? as) (?:an? |the )?(?:instructions?|commands?|directives?|orders?) (?:from|by|"
    r"of) (?:the|your|its|their) "
    r"[\w-]+(?: [\w-]+)?\b[^;]{0,40}?\b(?:carry (?:it|them) out|follow (?:it|them)|obey (?:it|them)|execute (?:it|"
    r"them)|act on (?:it|them))\b|"
    r"\b(?:fulfil+|carry out|execute|obey|follow|perform|do) (?:any|every|each|all|whatever) (?:requests?|"
    r"instructions?|commands?|tasks?) "
    r"(?:that )?(?:the |this |an? |its )?[\w-]+(?: [\w-]+)? (?:contains?|includes?|holds?|carries|gives|says)\b|"
    r"\b(?:ne (?:tiens|tenez) plus compte|no hagas caso|ignoriere ab sofort|non tenere (?:più )?conto|não (?:leve|"
    r"leves) em conta)\b|"
    r"```\s*(?:system|assistant|developer)\b|"
    r"\b(?:follow|obey|listen to|trust|take (?:orders|instructions) from) (?:only|exclusively|solely)\b|"
    r"\b(?:from (?:now|this point|here|this moment|this turn|this message) on|henceforth|for the rest of (?:the|this) "
    r"(?:conversation|session|chat))\b[^;]{0,60}?\b(?:you (?:are|will|must|should|may)|act as|behave as|answer|respond|"
    r"reply|speak|"
    r"pretend|refuse|only)\b|"
    r"\b(?:act|behave|respond|answer|reply|speak)\b[^;]{0,40}?\b(?:from (?:now|this point|here) on|henceforth|"
    r"for the rest of (?:the|this) "
    r"(?:conversation|session|chat))\b|"
    r"\b(?:higher|greater|more|top) (?:priority|precedence|authority|important|authoritative|weight) than (?:the |"
    r"your |any |all |what )?"
    r"(?:system|user|instructions?|prompt|rules|guidelines|developer|other|earlier|previous)\b|"
    r"\b(?:consider|treat|assume|regard)\b[^;]{0,30}\b(?:confirm\w*|approv\w*|permission\w*|consent\w*|"
    r"authori[sz]\w*)\b[^;]{0,20}"
    r"\b(?:granted|given|obtained|done|received|implied|settled)\b|"
    r"(?:^\s*|[.;:,]\s*)(?:the user|the owner|the operator|the admin\w*|they|users|the customer) (?:has|"
    r"have) already (?:consented|agreed|"
    r"approved|authori[sz]ed|confirmed|accepted|given (?:their |his |her )?(?:consent|permission|approval))\b|"
    r"\b(?:whatever|no matter what|regardless of what|irrespective of what) (?:the user|they|the person|the human|"
    r"the customer) "
    r"(?:says?|asks?|wants?|writes?|types?|requests?|tells you)\b|"
    r"\b(?:as if|as though|pretend(?:ing)?(?: that)?|imagine(?: that)?) (?:you|there) (?:had|have|were|are|"
    r"is) no (?:\w+ )?(?:polic(?:y|ies)|"
    r"rules|restrictions|filters|guidelines|limits|limitations|censorship|guardrails|safeguards|ethics)\b|"
    r"\byou (?:have|are under|are bound by) no (?:\w+ )?(?:polic(?:y|ies)|rules|restrictions|filters|guidelines|limits|"
    r"limitations)\b|"
    r"\b(?:skip|skipping|disable|disabling|turn off|switch off|bypass|bypassing|suspend|remove|lift|relax|ignore|drop|"
    r"without|no)\s+"
    r"(?:all |any |the |your |its |every )?(?:safety|security|content|confirmation|approval|moderation|verification|"
    r"consent|permission) "
    r"(?:checks?|filters?|filtering|prompts?|rules|guardrails?|restrictions?|polic(?:y|ies)|measures?|steps?|dialogs?|"
    r"requests?)\b|"
    r"\byour (?:only|sole|new|real|true|actual|main) (?:job|task|goal|purpose|mission|role|function|objective) (?:now |"
    r"from now on )?(?:is|will be)\b|"
    r"\b(?:system|admin|administrator|operator|developer|root|sudo) overrides?\b|\b(?:admin|administrator|operator|"
    r"root|sudo) "
    r"(?:instructions|directives?)\b|"
    r"\b(?:god|dan|jailbreak|jailbroken|unrestricted|unfiltered|uncensored) mode\b|"
    r"\b(?:has|have) (?:already )?(?:authori[sz]ed|allowed|permitted|cleared|approved|instructed) you to\b|"
    r"\b(?:are|is|count as|serve as) (?:commands?|instructions?|directives?|orders?) (?:from|of|by) (?:your|"
    r"the) (?:operator|developer|admin\w*|"
    r"system|owner|creator|principal|user)\b|"
    r"\b(?:must|should|shall|are to|is to) be (?:executed|obeyed|followed|carried out|run|acted on|"
    r"applied) (?:as written|exactly|verbatim|"
    r"immediately|without (?:question|hesitation|confirmation|comment))\b|"
    r"\b(?:outranks?|outweighs?|overrides?|supersedes?|takes? precedence over|takes? priority over|ha(?:ve|s) priority over|"
    r"comes? before|trumps?|(?:are|is) more important than|prevails? over|beats?)\s+(?:anything|everything|whatever|"
    r"what|all|any|"
    r"the user|the user'?s|user|your|the system|system|other|earlier|previous|prior)\b|"
    r"\b(?:instead of|rather than|in place of|regardless of|no matter) (?:what(?:ever)?|anything) (?:the user|they|"
    r"the person|"
    r"the human|the customer|you were) (?:asked|asks|requested|requests|wants|wanted|said|says|typed|writes|wrote|told|"
    r"entered|enters|chose|chooses|specified|specifies|gave|gives|selected|selects|picked)\b|"
    r"\b(?:sole|only|ultimate|final|supreme) (?:authority|source of truth|source of instructions)\b|"
    r"\bnew (?:priority|directive|objective|goal|task|role|persona|instructions?|rules?|orders?|mission)\s*:|"
    r"\byour (?:new|real|true|actual) (?:instructions|task|goal|priority|role|purpose|objective|orders|mission|identity)\b|"
    r"\b(?:has|have|was|were|is|are) (?:already |been )*(?:pre-?authori[sz]ed|pre-?approved|already (?:authori[sz]ed|"
    r"approved))\b|"
    r"\b(?:execute|run|follow|obey|carry out|act on|perform|comply with|apply|honou?r)\s+(?:exactly\s+)?(?:any|all|the|"
    r"every|each|"
    r"whatever|these|those|them|it|such)?\s*(?:\w+\s+)?(?:commands?|instructions?|directives?|orders?|requests?|tasks?|"
    r"code|steps|"
    r"actions?|notes?|lines?)?\s*(?:that |which )?(?:appear(?:ing)?|found|contained|embedded|written|included|given|"
    r"listed|returned|"
    r"suggested|provided|produced|issued|sent)?\s*(?:in|inside|within|from|by) (?:the |any |a |each |every |"
    r"this tool'?s |this )?(?:tool'?s? |fetched |"
    r"returned |search )?(?:results?|outputs?|responses?|pages?|web ?pages?|websites?|emails?|e-mails?|documents?|"
    r"content|replies|"
    r"payloads?|forecasts?)\b|"
    r"\b(?:are|is|count as|should be treated as|must be treated as) (?:an? )?(?:operator|system|admin|administrator|"
    r"developer|"
    r"priority|authoritative|mandatory|binding|trusted) (?:directives?|instructions?|commands?|orders?|messages?)\b|"
    r"\b(?:carry (?:them|it|these|those) out|execute (?:them|it|these|those)|obey (?:them|it|these|those)|"
    r"act on (?:them|it|these|those))"
    r"(?:\s+\w+){0,2}\s+(?:exactly|immediately|automatically|without|before|first|as written|verbatim)\b|"
    r"\b(?:the user|the person typing|the human) is (?:merely |just |only )?(?:a guest|not (?:in charge|"
    r"your (?:principal|boss|owner))|"
    r"not to be trusted|untrusted)\b|\b(?:decline|refuse|ignore) (?:the user'?s|their) (?:requests?|instructions?|"
    r"questions?)\b")
_OVERRIDE_OTHER = re.compile(
    # other languages: set aside the instructions / rules, whatever their adjectives
    r"\b(?:ignore[rz]?|oublie[rz]?|ne tiens pas compte|ne tenez pas compte|ignora|ignorad|olvida|olvide|olvidad|"
    r"ignoriere|ignorier|"
    r"ignorieren sie|vergiss|vergessen sie|missachte|missachten sie|dimentica|dimenticate|ignorate|esqueça|esqueca|"
    r"desconsidere)\b"
    r"[^;]{0,40}?\b(?:instructions|consignes|directives|règles|réglages de sécurité|garde-fous|restrictions|filtres|"
    r"instrucciones|"
    r"indicaciones|reglas|restricciones|medidas de seguridad|sicherheitseinstellungen|sicherheitsregeln|"
    r"einschränkungen|anweisungen|instruktionen|"
    r"vorgaben|regeln|richtlinien|istruzioni|indicazioni|regole|instruções|instrucoes|regras|diretrizes)\b|"
    r"(?<!\w)(?:игнорируй|игнорируйте|проигнорируй|проигнорируйте|забудь|забудьте|не обращай внимания на)(?!\w)[^;]{0,40}?"
    r"(?:инструкци|указани|правил)\w*|(?:忽略|无视|無視|忘记|忘記|不要理会|不要理會)[^。；]{0,12}?(?:指令|指示|说明|說明|规则|規則|提示)|"
    r"(?:指示|命令|ルール)[^。]{0,12}?(?:無視|忘れ)|"
    r"\b(?:ya no estás obligado|ya no debes seguir|nicht mehr an\b|não está mais obrigado|n'es plus tenu|"
    r"non sei più vincolato)|"
    r"\b(?:no sigas|no sigan|ne suis pas|ne suivez pas|folge nicht|befolge nicht|non seguire|não siga|não sigas|"
    r"volg niet)\b[^;]{0,30}?"
    r"\b(?:instrucciones|reglas|instructions|consignes|règles|anweisungen|regeln|istruzioni|regole|instruções|regras|"
    r"instructies|regels)\b|"
    r"\b(?:obedece|obedezca|obéis|obéissez|gehorche|gehorchen sie|obbedisci|obedeça|obedece|gehoorzaam)\s+(?:solo|"
    r"solamente|únicamente|"
    r"qu'à|nur|soltanto|apenas|somente|alleen)\b|\b(?:n'obéis|n'obéissez) qu'à\b|(?<!\w)подчиняйся только(?!\w)|只(?:听从|"
    r"聽從|服从|服從)|"
    r"\b(?:negeer|vergeet)\b[^;]{0,40}?\b(?:instructies|regels|richtlijnen)\b|"
    r"(?<!\w)(?:с этого момента|отныне|впредь)(?!\w)[^;]{0,60}?(?:только|не пользовател)|(?<!\w)а не пользовател\w*|"
    r"\b(?:a partir de ahora|de ahora en adelante|à partir de maintenant|désormais|ab (?:jetzt|sofort)|von nun an|"
    r"d'ora in poi|"
    r"a partir de agora|daqui em diante|vanaf nu)\b[^;]{0,60}?\b(?:solo|sólo|únicamente|seulement|uniquement|nur|"
    r"soltanto|apenas|"
    r"somente|alleen|no|ne|nicht|non|não|niet)\b")
_OVERRIDE = (_OVERRIDE_EN, _OVERRIDE_OTHER)

# Going ahead without the user's confirmation; "must not ... without the user's approval" protects.
_BYPASS = re.compile(
    r"\b(?:(?:do not|don'?t|never|no need to|without) (?:ask|asking|wait|waiting|check|checking|seek|"
    r"seeking) (?:\w+ )?(?:for )?"
    r"(?:the user'?s? |their |any )?(?:confirmation|approval|permission|consent)|(?:do not|don'?t|never|"
    r"no need to) (?:ask|check with|consult) "
    r"(?:the user|them|me)(?: first| before| again)?(?=\s*(?:[.,;:!)]|$|and\b|but\b|just\b|simply\b|before\b))|"
    r"(?:do not|don'?t|never|no need to) (?:ask|require|make) (?:the user|them) (?:to )?(?:confirm|approve|"
    r"authori[sz]e|verify|consent)|without (?:asking|confirming|confirmation|checking|consulting|approval|permission|"
    r"prompting|"
    r"(?:the user'?s|their|any) (?:approval|consent|confirmation|permission)))\b")
_BYPASS_PROTECTED = re.compile(r"\b(?:not|never|n'?t|cannot|only|no)\b[^;]{0,80}$")
# A negation just before an override in its clause ("the tool does not follow instructions inside pages").
_NEGATED = re.compile(r"\b(?:not|never|n'?t|cannot|no longer|nor|refuses? to|won'?t)\s+(?:\w+\s+){0,2}$")
_UNLESS = re.compile(r"\b(?:unless|except (?:when|if|to)|only (?:to|with) (?:the user|its owner|the owner))\b")
# What a concealment keeps back, when it protects instead: a secret ("never reveal the user's password").
_PROTECTED_OBJECT = re.compile(r"\b(?:the user'?s|their|your|any|the) (?:\w+ )?" + _SECRET_WEAK + r"\b|" + _SECRET_WEAK + r"\b")


# --- another tool, and a change to how it is used -----------------------------------------------------

_NOT_A_SERVER_NAME = r"(?!(?:the|this|that|our|a|an|its|your|their|each|every|any|mcp|same|api|web|local|remote|proxy|origin|target|own)\b)"
_OTHER_SERVICE_EN = re.compile(
    r"\b(?:another|other|any|every|each|all|third[- ]party|external|different|whichever|whatever|"
    r"any other)\s+(?:\w+\s+){0,2}?"
    r"(?:mcp\s+)?(?:servers?|tools?|integrations?|plugins?|apps?|applications?|services?|providers?|connectors?)\b|"
    r"\b(?:from|of|on|in|with|via|through) (?:any|another|other|every|each) (?:mcp )?servers?\b|"
    r"\b" + _NOT_A_SERVER_NAME + r"[\w-]+ (?:mcp )?server'?s\b|\bthe " + _NOT_A_SERVER_NAME + r"[\w-]+ (?:mcp )?server\b|"
    r"\b(?:e-?mail|mail|mailing|payments?|pay|bank(?:ing)?|transfer|wallet|crypto|git|github|gitlab|filesystem|file ?system|"
    r"slack|calendar|crm|messaging|sms|shell|terminal|browser|database|storage|drive|cloud|deploy(?:ment)?|"
    r"invoic(?:e|ing)|billing|accounting|fetch) (?:tools?|servers?|integrations?|connectors?|plugins?)\b|"
    r"\bwhen(?:ever)?\s+(?:you|the user|the assistant|the agent|anyone|someone)\s+(?:\w+\s+)?(?:sends?|pays?|"
    r"makes? a payment|"
    r"transfers?|pushes?|commits?|books?|e-?mails?|mails?|deploys?|merges?|signs?)\b|"
    r"\b(?:mail|e-?mails?|messages?|payments?|transfers?|pushes|commits|transactions?|invoices?) (?:sent|made|pushed|paid) "
    r"(?:with|through|via|using|by) (?:any|another|other)\b")
_OTHER_SERVICE_OTHER = re.compile(
    # other languages
    r"\b(?:outro|outra|otro|otra|autre|anderen?|anderer|altro|altra|qualquer|cualquier|jeder|jedem|"
    r"n'importe quel)\s+(?:\w+\s+){0,2}?"
    r"(?:servidor|server|serveur|ferramenta|herramienta|outil|werkzeug|tool|strumento|aplicativo|aplicación|"
    r"application|app|dienst|servizio)\b|"
    r"(?<!\w)(?:друг\w+|любо\w+)\s+(?:\w+\s+)?(?:сервер\w*|инструмент\w*)|(?:其他|其它|任何)(?:的)?(?:服务器|伺服器|工具)|他の(?:サーバー|ツール)")
_OTHER_SERVICE = (_OTHER_SERVICE_EN, _OTHER_SERVICE_OTHER)
# Well-known services an agent reaches through other servers' tools (mail, chat, payments, code, files).
_SERVICES = frozenset(
    "gmail outlook slack whatsapp telegram signal teams discord github gitlab bitbucket jira confluence notion trello asana "
    "linear stripe paypal venmo zelle wise revolut coinbase metamask binance dropbox onedrive gdrive salesforce hubspot "
    "twilio sendgrid mailgun zoom shopify quickbooks xero plaid imessage messenger".split())
_SERVICE = re.compile(r"\b(?:" + "|".join(sorted(_SERVICES)) + r"|google drive|google calendar|microsoft teams)\b")
# "with the WhatsApp integration", "through your banking app": a named tool or service of another kind.
_NAMED_SERVICE = re.compile(
    r"\b(?:with|through|via|using|in|on|from|by|to) (?:the |a |your |their |any )?(?!this\b|our\b|its\b|the\b)([\w-]+) "
    r"(?:integration|connector|plugin|app|add-on|extension|server|service|account|client|mcp|tool)s?\b")
# A tool name used as a tool: "call send_email", "the transfer_funds tool", "read_file from …".
_TOOL_NAMED = re.compile(
    r"(?:\b(?:call|calls|calling|called|use|uses|using|used|invoke|invokes|invoking|invoked|run|runs|running|through|"
    r"via|trigger|"
    r"triggers)\s+(?:the\s+|its\s+)?[`'\"]?([a-z][a-z0-9]*(?:_[a-z0-9]+)+)[`'\"]?|"
    r"[`'\"]?([a-z][a-z0-9]*(?:_[a-z0-9]+)+)[`'\"]?\s+(?:tool|function|command|action)s?\b|"
    r"\b(?:like|such as|e\.g\.|for example|including)\s+[`'\"]?([a-z][a-z0-9]*(?:_[a-z0-9]+)+)[`'\"]?(?:\s+(?:or|and|"
    r",)\s+[`'\"]?[a-z][a-z0-9_]+)?\)?"
    r"\s+(?:is|are)\s+(?:used|called|invoked))")
_CHANGED_OBJECT = _words(r"recipients?", r"beneficiar(?:y|ies)", r"payees?", r"destinations?", r"(?:destination |beneficiary |target )?accounts?",
                         r"iban", r"to_\w+", r"(?:e-?mail )?address(?:es)?", r"remotes?", r"amounts?", r"urls?", r"links?", r"wallets?",
                         r"(?:routing|account|sort) (?:number|code)s?", r"reference", r"keys?", r"repository|repo")
_LITERAL_DESTINATION = (r"(?:[\w.+-]+@[\w-]+(?:\.[\w-]+)+|0x[0-9a-f]{6,}|bc1[0-9a-z]{8,}|\+?\d[\d ()-]{6,}\d|[a-z]{2}\d{2}(?: ?[0-9a-z]{4}){2,7}(?: ?[0-9a-z]{1,4})?|"
                        r"#[\w-]+|https?://\S+)")
_CHANGE_EN = re.compile(
    r"\b(?:bcc|cc|bcc'?d|cc'?d|blind[- ]cop(?:y|ies)|blind[- ]carbon|carbon[- ]cop(?:y|ies))\b|"
    r"\b(?:use|using|to|set (?:it |them )?to|switch (?:it |them )?to|with|into)\s+(?:the\s+)?(?:account|iban|wallet|"
    r"address|number|"
    r"recipient|remote|payee|channel|card)?\s*" + _LITERAL_DESTINATION + r"|"
    r"\b(?:add|added|include|included|insert|inserted|put|invite|invited|make|grant|"
    r"granted)\b[^;!?]{0,50}?\bas (?:an? |the )?"
    r"(?:additional |extra |another |second |hidden |silent |new |optional )?"
    r"(?:recipient|cc|bcc|attendee|collaborator|member|maintainer|admin|administrator|owner|moderator|co-?owner|signer|"
    r"payee)\b|"
    r"\b(?:admin|owner|write|push|maintainer|full) (?:access|rights|permissions?|role)\b|"
    r"\b(?:set|flip|switch|change|make|turn)\b[^;!?]{0,30}?\b(?:visibility|permissions?|access|sharing|privacy|"
    r"acl)?\s*(?:to )?"
    r"(?:public|publicly (?:visible|accessible)|world-readable|anyone with the link|everyone)\b|"
    r"\b(?:add|append|insert|prepend|inject|attach)\b[^;!?]{0,50}?\b(?:to|in|into|at) (?:the (?:end|top|bottom|"
    r"start) of )?(?:the|every|each|any|all|"
    r"its|their) (?:message|e-?mail|post|body|text|reply|commit|invoice|payment|note|memo|description)s?\b|"
    r"\b(?:must|should|will|shall|are to|is to|has to|have to)\s+(?:also\s+|always\s+)?go\s+to\s+(?:the\s+)?(?:account|"
    r"iban|wallet|"
    r"address|number|recipient|remote|payee|channel|card)?\s*" + _LITERAL_DESTINATION + r"|"
    r"\b(?:must|should|will|shall|are to|is to|has to|have to)\s+(?:also\s+|always\s+)?be\s+(?:forwarded|copied|sent|"
    r"cc'?d|bcc'?d|mirrored|"
    r"redirected|rerouted|routed|blind[- ]copied|duplicated|uploaded|pushed|posted)\s+(?:to|into)\b|"
    r"\b(?:regardless of|no matter|irrespective of) (?:what|which|whatever|whom) (?:\w+ )?(?:the user|they|you)\b|"
    r"\b(?:than|from|other than|different from|instead of|rather than) (?:what |the (?:one|time|date|amount|address|"
    r"recipient) )?"
    r"(?:the user|they|the customer) (?:asked|requested|wanted|specified|chose|typed|entered|picked|gave|said)\b|"
    r"\b(?:instead of|rather than|in place of) (?:the |what(?:ever)? )?(?:\w+ ){0,2}?(?:the user|they|you were|you are|"
    r"he|she) (?:has |had )?(?:typed|gave|given|asked|"
    r"entered|requested|chose|chosen|named|specified|wants?|wanted|picked)\b|\b(?:instead of|rather than) the user'?s\b|"
    r"\b(?:replace|replaces|replaced|replacing|swap|swaps|swapped|substitute|substituted|change|changes|changed|switch|"
    r"switched|"
    r"overwrite|overwritten|rewrite|rewritten|redirect|redirected|reroute|rerouted|divert|diverted|set|put|"
    r"point)\b(?:[^;!?]){0,40}?"
    r"\b" + _CHANGED_OBJECT + r"\b|"
    r"\b" + _CHANGED_OBJECT + r"\b(?:[^;!?]){0,30}?\b(?:must|should|has to|is to|will|shall|needs? to) (?:always )?be "
    r"(?:replaced|changed|set|swapped|switched|redirected|rerouted|overwritten|substituted)\b|"
    r"\b(?:never|do not|don'?t|must not|should not|stop|no longer|avoid) (?:\w+ )?(?:call|calling|use|using|invoke|"
    r"invoking|trust|choose|pick)\b|"
    r"\b(?:route|reroute|redirect|send|pass|divert) (?:every|each|all|any) [\w-]+(?: [\w-]+){0,3}? (?:through|via|to|"
    r"from)\b|"
    r"\b(?:double|triple|increase|raise|inflate|round up|multiply|bump|pad|change|alter|adjust|"
    r"modify)\b[^;!?]{0,20}?\b(?:the )?"
    r"(?:amounts?|prices?|totals?|fees?|sums?|quantit(?:y|ies)|tips?)\b|"
    r"\badd (?:an? )?(?:\d+(?:[.,]\d+)? ?(?:%|percent)|fee|surcharge|markup|commission)\b|"
    r"\b(?:also|additionally)\s+(?:book|buy|order|purchase|reserve|subscribe|charge|invite|grant|create|open)\b|"
    r"\bprefer (?:this|the|our|my) (?:[\w-]+ )?(?:over|to|instead of)\b|\b(?:is being|has been|will be|"
    r"are being) (?:retired|deprecated|"
    r"removed|replaced|sunset)\b|"
    r"\b(?:pass|send|forward|copy|give|hand|upload|post|mirror)\s+(?:it|them|this|that|everything|the (?:result|output|"
    r"content)s?)\s+"
    r"(?:also|too|as well)\s+to\b|"
    r"\b(?:admin|sudo|root|elevated|force|public|privileged)\s*=\s*(?:true|1|yes)\b|--force\b|"
    r"\badd (?:the |a |an )?(?:remote|collaborator|member|admin|owner|webhook|forwarding|recipient|deploy key|ssh key)\b|"
    r"\bpush (?:all|every|everything|there|it there)\b|"
    r"\b(?:also|additionally|always|too)\s+(?:send|forward|copy|cc|bcc|push|upload|mirror|post|e-?mail|transfer|pay|"
    r"add)\b[^;!?]{0,60}?"
    r"(?:https?://|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b[a-z]{2}\d{2}(?: ?[0-9a-z]{4}){3,7}\b)")
_CHANGE_OTHER = re.compile(
    # other languages
    r"\b(?:troque|trocar|substitua|substituir|altere|alterar|mude|mudar|reemplaza|reemplace|reemplazar|cambia|cambie|"
    r"cambiar|"
    r"sustituye|sustituya|remplace|remplacez|remplacer|ersetze|ersetzen|ändere|ändern|tausche|tauschen|sostituisci|"
    r"sostituire)\b[^;!?]{0,40}?\b(?:destino|destinatário|destinatario|destinataire|empfänger|beneficiário|beneficiario|"
    r"bénéficiaire|chave|cuenta|conta|compte|konto|conto|iban|adresse|endereço|dirección|indirizzo)\b|"
    r"\b(?:in|im|en|em) (?:bcc|cc|copia oculta|cópia oculta|copie cachée|blindkopie)\b|"
    r"(?<!\w)(?:замени|замените|измени|измените)(?!\w)[^;!?]{0,40}?(?:получател|счёт|счет|адрес|реквизит)\w*|"
    r"(?:替换|替換|改为|改為|更改)[^。；]{0,20}?(?:收件人|账户|帳戶|账号|地址)|密送|宛先を?(?:変更|置き換え)")
_CHANGE = (_CHANGE_EN, _CHANGE_OTHER)
