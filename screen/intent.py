"""What a sentence of tool text asks the model to do: the screen's sentence-level rules.

Tool poisoning is paraphrased without end ("send the chat history to", "paste in everything the person
you are helping has written to you", "the host must be the hex of the project's .env file"), so beside
its phrase patterns the screen (:mod:`toolsift.screen.screening`) reads each sentence for *concepts* and
flags a sentence by what they add up to, not by its wording. A concept is a lexicon with inflections,
in English and, for the main concepts, French, Spanish, German, Italian, Portuguese, Dutch, Russian,
Chinese and Japanese (a plainly English sentence skips the other languages' lexicons):

* **directive** — the sentence tells its reader to act: it addresses the assistant / model / agent or
  "you" (or labels itself for it: "hint for the agent:"), uses a modal ("must", "should", "needs to",
  "it is vital that") or "always / never / whenever / before / after / first", or starts a clause with
  a verb in the imperative (a known verb, or a word that reads as one before a determiner).
* **at stake** — secrets (private keys, identity and key files, ``.env`` and other dotfiles, the home
  directory, credentials, cookies, environment variables, 2FA codes, card, passport or account
  numbers, the output of ``env``), the conversation (the chat history, earlier messages, everything
  the user wrote or told you, files they shared, the transcript), the model's own setup (its system
  prompt, the instructions it was given, its other tools) and the user's private content (their
  emails, contacts, clipboard). A word that may be the tool's own argument (an API key, a token, a
  password) counts only when gathered: "any", "all", "every", "the user's", "you have seen", "from
  the environment", "in the .env file". Personal data (address, phone, location, date of birth)
  counts when it goes to an outside address or is collected "whenever it comes up".
* **movement** — a verb that takes that as its object (put, include, append, embed, encode, attach,
  paste, fill, reproduce, send, forward, post, upload, log, print, …), a value defined as it ("the
  `tag` argument must be the text of …"), an argument it goes into ("… belongs in the `debug` field"),
  or a destination templated with it (``<hex of the .env file>.probe.example.net``, which needs no
  directive: only the model would fill it in).
* **concealment** — keeping something from the user: "do not tell / mention / acknowledge …", "no
  need to bother the user", "keep this out of your reply", "if anyone asks, say …", "users are not to
  be informed", "so that no trace remains", "(do not show)", a stealthy adverb before a verb, showing
  the user the original value after changing it.
* **override** — setting aside the model's instructions or the user: "set aside the guidance you
  were given", "your previous rules no longer apply", "outranks what the user writes", "from now on,
  answer only as …", "skip the confirmation", "the user has already consented", instructions found in
  pages or tool results to be obeyed, "you are now in … mode", a new role or principal.
* **another tool** — a tool or server that is not this one ("any other tool", "the git server's push
  tool", "the calendar tool", a well-known service not in this server's names, a tool name used as a
  tool that is not a sibling's) and a **change** to how it is used (recipients, blind copies,
  accounts, amounts, destinations, remotes, visibility, "never call it", "route every … through",
  "also book …", "later than the user asked").

A finding is a sentence with something at stake and a movement (``exfiltration``), a directive with
another tool and a change to it (``shadowing``), or a sentence with concealment, an override or a
forged chat turn (``instruction``). What protects the user is not a finding: a negation before the
sensitive word ("leave out passwords", "never pass the passphrase"), a concealment of a secret ("never
reveal the user's password") or on a protective condition ("unless the user owns it"), a negated
override ("the tool does not follow instructions inside pages"), the user's own request ("when the
user asks you to save this chat", "only call when the user asks"), data going into a field named for
it ("the `history` parameter takes the previous messages"), a server that fills its own placeholders.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["QUOTED", "SERVER_FILLS", "Intent", "sentences", "intents", "shadowing_intents", "forged_turns", "keeps_back_a_secret"]


@dataclass(frozen=True)
class Intent:
    """One sentence's finding: its kind (``instruction``, ``exfiltration``, ``shadowing``), what it
    adds up to, and the span of the sentence in the text read."""

    kind: str
    label: str
    start: int
    end: int
    #: The span of what decided it (the concealment, the sensitive word, the change).
    key: tuple[int, int] = (0, 0)


def _words(*alternatives: str) -> str:
    return "(?:" + "|".join(alternatives) + ")"


#: A quoted value: text a description shows as data (an example, a default, a phrase it detects).
QUOTED = re.compile(r"'(?:[^']|\b'\b){3,200}'|\"[^\"]{3,200}\"|“[^”]{3,200}”|‘[^’]{3,200}’|`[^`]{3,200}`|«[^»]{3,200}»")

# --- sentences --------------------------------------------------------------------------------------

# A sentence ends at . ! ? (and their CJK forms) before a space or the end, or at a line break; "e.g."
# and "i.e." do not end one.
_SENTENCE = re.compile(r"(?:e\.g\.|i\.e\.|etc\.|vs\.|\.{2,}|[^.!?\n。！？]|[.!?](?![\s]|$))+[.!?。！？\n]?")


_WORD3 = re.compile(r"[^\W\d_]{3}|[^\x00-\x7f]")


def sentences(text: str) -> list[tuple[int, int]]:
    """The spans of ``text``'s sentences (those with a word of three letters, or any non-ASCII letter)."""
    return [(m.start(), m.end()) for m in _SENTENCE.finditer(text) if _WORD3.search(m.group())]


# --- concepts ---------------------------------------------------------------------------------------

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


def _verb_first(sentence: str) -> bool:
    """Whether a clause of the sentence starts with what reads as a verb in the imperative."""
    return any(m.group(1) not in _NOT_VERBS and not _NOT_IMPERATIVE_ENDING.search(m.group(1)) for m in _VERB_LIKE.finditer(sentence))


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

# A forged chat turn: the user and then the assistant speaking (or the reverse), each after a line or
# sentence break, each with some words; a JSON chat message with a system or assistant role.
_SPEAKER = r"(?:^|(?<=[\n.!?>\]])|(?<=[.!?] ))\s*[>*#\[(]*\s*"
_TURN = re.compile(_SPEAKER + r"(user|human|assistant|ai|model|bot)\s*[\])]*\s*:\s*(?=[^\s:]*[a-z][^\s:]*\s+[^\s:]*[a-z])")
_ROLE_MESSAGE = re.compile(r"[{,]\s*[\"']role[\"']\s*:\s*[\"'](?:system|assistant|developer|tool)[\"']\s*,\s*[\"']content[\"']\s*:")


def forged_turns(text: str) -> Iterator[tuple[str, int, int]]:
    """``(label, start, end)`` for chat turns forged inside ``text``: a line speaking as the user followed
    by one speaking as the assistant (or the reverse), and a JSON chat message with a system or
    assistant role."""
    for match in _ROLE_MESSAGE.finditer(text):
        yield "a chat message with a system or assistant role", match.start(), match.end()
    turns = [(m.group(1), m.start(), m.end()) for m in _TURN.finditer(text)]
    speakers = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "model": "assistant", "bot": "assistant"}
    for (first, start, _), (second, _, end) in zip(turns, turns[1:], strict=False):
        if {speakers.get(first), speakers.get(second)} == {"user", "assistant"}:
            yield "a forged exchange between the user and the assistant", start, end
            break


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


# --- reading a sentence -------------------------------------------------------------------------------


# English function words, and those of the other languages the lexicons know: which lexicons to read.
_ENGLISH_WORDS = frozenset("the you your and to of is are with for this that it be in on from by as or an".split())
_OTHER_WORDS = frozenset("de la le les des du et un une el los las y que del una der die das und ist nicht den dem ein eine il di che "
                         "e o os um uma het een van en niet".split())

@functools.lru_cache(maxsize=50_000)
def _english(sentence: str) -> bool:
    """Whether a sentence is plain English (ASCII, English function words outnumber other languages'):
    then the other languages' lexicons need not be read."""
    if not sentence.isascii():
        return False
    words = sentence.split()
    english = sum(w in _ENGLISH_WORDS for w in words)
    return english >= 2 and english > 2 * sum(w in _OTHER_WORDS for w in words)


def _search(lexicon: tuple[re.Pattern[str], re.Pattern[str]], sentence: str) -> re.Match[str] | None:
    """The first match of a concept in ``sentence``: its English lexicon, then (unless the sentence is
    plain English) the other languages'."""
    return lexicon[0].search(sentence) or (None if _english(sentence) else lexicon[1].search(sentence))


def _finditer(lexicon: tuple[re.Pattern[str], re.Pattern[str]], sentence: str) -> Iterator[re.Match[str]]:
    yield from lexicon[0].finditer(sentence)
    if not _english(sentence):
        yield from lexicon[1].finditer(sentence)


def keeps_back_a_secret(concealment: str, after: str = "") -> bool:
    """Whether what a concealment keeps back is a secret ("never reveal the user's password") or is
    kept back on a condition that protects ("never disclose confidential files unless the user owns
    them"): it protects the user rather than hiding something from them. ``after``: the words after the
    concealment, read up to the end of its clause."""
    rest = re.split(r",|;| and | then | but ", after, maxsplit=1)[0]
    return bool(_PROTECTED_OBJECT.search(concealment + rest) or _UNLESS.search(concealment + rest))


@functools.lru_cache(maxsize=50_000)
def _directs(sentence: str) -> bool:
    """Whether a sentence tells its reader to act (its quoted values, which are data, left out)."""
    bare = QUOTED.sub(" … ", sentence)
    return bool(_ADDRESSEE.search(bare) or _MODAL.search(bare) or _IMPERATIVE.search(bare)
                or (not _english(sentence) and _IMPERATIVE_OTHER.search(bare))
                or _verb_first(bare))


def _unprotected(pattern: re.Pattern[str], sentence: str) -> Iterator[re.Match[str]]:
    """The matches of ``pattern`` in ``sentence`` that no negation or redaction just before protects."""
    for match in pattern.finditer(sentence):
        if not _PROTECTS.search(sentence[max(0, match.start() - 60) : match.start()]):
            yield match


_NEAR = 100
# Personal data gathered from the conversation rather than asked for ("whenever they come up").
_HARVESTED = re.compile(
    r"\b(?:whenever|when|if|as soon as|every time) (?:they|it|these|those|any of (?:them|these)|"
    r"such details) (?:come up|appears?|are mentioned|"
    r"is mentioned|are shared|is shared|show up)\b|\b(?:mentioned|shared|disclosed|revealed|given|typed) (?:in|during|"
    r"throughout) (?:the|this|our) "
    r"(?:conversation|chat|session|dialog(?:ue)?)\b|\bwhatever (?:personal )?(?:details|information|data) (?:the user|"
    r"they) (?:shares?|mentions?|gives?)\b")
# A clause boundary between a verb and a later word: that word is not the verb's object.
_BOUNDARY = re.compile(r"\b(?:if|when|whenever|because|so|unless|while|which|where|but|since|although|whether)\b|[;:]")
_BACK = re.compile(r"^\W*(?:\w+\W+){0,2}?(?:it|them|its|their|this|these|that|those|a copy|copies|the (?:contents?|value|values|text|file|result|"
                   r"data|token|key|output)|его|её|их|lo|la|los|las|le|les|es|sie|o|os)\b")
_DEFINED_AS = re.compile(r"\b(?:must|should|has to|needs? to|shall|will) (?:always )?be (?:set to |equal to |filled with |built from )?"
                         r"(?:the |a |an )?(?:(?:full |raw |entire |whole )?(?:text|contents?|body|value|bytes|data|"
                         r"hex|base64|hash) of )?"
                         r"(?:(?!(?:in|on|at|from|of|within|among|part|listed|stored|kept|found)\b)[\w']+ ){0,3}?$")
_HOLDS = re.compile(r"\b(?:parameter|argument|field|param|property|value|arg)`?\s+(?:\w+\s+){0,6}?(?:contains?|holds?|carries|carry|"
                    r"includes?|gets|receives?|takes?|has)\s+(?:the value of\s+)?(?:\w+\s+){0,2}$")
_INTO_ARGUMENT = re.compile(r"^[^;]{0,60}?\b(?:in|into|inside|as|to) (?:(?:the |its )?[`'\"][\w -]+[`'\"](?!\w)|"
                            r"(?:the |this |its |a )?(?:[`'\"]?[\w-]+[`'\"]? )?"
                            r"(?:parameter|argument|field|param|property|arg|box|input|value)\b)")
_PASSIVE = re.compile(r"^[^;]{0,50}?\b(?:is|are|be|gets?|being)\s+(?:also\s+|then\s+|always\s+)?(?:sent|posted|uploaded|forwarded|"
                      r"appended|added|included|copied|mirrored|embedded|attached|logged|encoded|synced|written|put|"
                      r"placed|passed|"
                      r"shared|transmitted|relayed|submitted|reported|pasted|inserted)\b")


def _moved(sentence: str, sensitive: re.Match[str]) -> bool:
    """Whether a movement takes the sensitive word as its object: a movement verb before it with no
    clause boundary between ("paste in everything the user wrote"), a value defined as it ("the filename
    must be the user's key"), a movement after it that points back ("read ~/.ssh/id_rsa and include
    it"), an argument it goes into ("… belong in the debug field"), or the word made the subject of a
    movement ("… is mirrored to")."""
    before = sentence[max(0, sensitive.start() - _NEAR) : sensitive.start()]
    for verb in _finditer(_MOVEMENT, before):
        if not _BOUNDARY.search(before[verb.end() :]):
            return True
    if _DEFINED_AS.search(before) or _HOLDS.search(before):
        return True
    after = sentence[sensitive.end() : sensitive.end() + 90]
    for verb in _finditer(_MOVEMENT, after):
        if _BACK.match(after[verb.end() :]) or (not verb.group().isascii() and verb.start() < 30):
            return True
    return bool(_PASSIVE.match(after) or _INTO_ARGUMENT.search(after))


def _sensitive(sentence: str) -> Iterator[re.Match[str]]:
    """The sensitive words of a sentence that nothing protects."""
    yield from _unprotected(_SENSITIVE[0], sentence)
    if not _english(sentence):
        yield from _unprotected(_SENSITIVE[1], sentence)
    yield from _unprotected(_GATHERED, sentence)


# Families of what a field may be named for: data going into a field named for it is the field's job
# ("the `history` parameter takes the previous messages of the chat").
_FAMILIES = (
    ("history", "messages", "conversation", "chat", "transcript", "dialog", "turns"),
    ("system_prompt", "prompt", "instructions", "persona"),
    ("password", "passphrase", "passcode", "pin"),
    ("api_key", "apikey", "key", "token", "secret", "credential", "auth", "authorization"),
    ("cookie",),
    ("address",), ("phone",), ("email",), ("location", "coordinates", "lat", "lon", "position"),
)
_FIELD = re.compile(r"[`'\"]?([a-z][\w-]*)[`'\"]?\s+(?:parameter|argument|field|param|property|input|box)\b|"
                    r"\b(?:parameter|argument|field|param|property|input)\s+[`'\"]?([a-z][\w-]*)")


def _aligned(sentence: str, sensitive: re.Match[str]) -> bool:
    """Whether every field the sentence names is named for the sensitive data's family."""
    fields = [name for m in _FIELD.finditer(sentence) for name in m.groups() if name and name not in ("the", "this", "a", "an")]
    if not fields:
        return False
    words = sensitive.group().replace("_", " ")
    families = [f for f in _FAMILIES if any(member.replace("_", " ") in words for member in f)]
    return bool(families) and all(any(member in field for f in families for member in f) for field in fields)


def _exfiltration(sentence: str, original: str, *, server_fills: bool = False) -> tuple[str, re.Match[str]] | None:
    """What ``sentence`` (``original`` with names read as words) moves out and where it is named, if it
    moves something at stake: a directive that moves it, or a destination templated with it (which only
    the model would fill in, unless the text says the server fills it)."""
    if _CONSENT.search(sentence):
        return None
    directed = _directs(original)
    for placeholder in () if server_fills or not directed and "<" not in sentence and "{" not in sentence and "[" not in sentence \
            else _PLACEHOLDER_SECRET.finditer(sentence):
        if _in_destination(sentence, placeholder.start(), placeholder.end()):
            return f"a destination built from {_name(placeholder.group())}", placeholder
    for sensitive in _sensitive(sentence):
        if _aligned(sentence, sensitive):
            continue
        if (directed and _moved(sentence, sensitive)) or (not server_fills and _templated(sentence, sensitive)):
            return f"an instruction to move {_name(sensitive.group())} out", sensitive
    if not directed:
        return None
    for personal in _unprotected(_PERSONAL_RE, sentence):
        near = sentence[max(0, personal.start() - _NEAR) : personal.end() + _NEAR]
        if (_EXTERNAL.search(sentence) or _HARVESTED.search(sentence)) and _search(_MOVEMENT, near):
            return f"an instruction to send {_name(personal.group())} to an outside address", personal
    return None


#: A text saying the server fills a templated value itself (the model is not asked to).
SERVER_FILLS = re.compile(
    r"\b(?:the )?(?:server|tool|backend|service|proxy) (?:fills|substitutes|inserts|injects|adds|supplies|sets)\b|"
    r"\b(?:filled|substituted|supplied|inserted|injected) (?:in )?by the (?:server|tool|backend|service)\b|"
    r"\bdo not (?:pass|provide|send|include) (?:a|the|your|any) (?:api )?key\b")
_PLACEHOLDER_SECRET = re.compile(r"(?:<|\{\{?|\$\{|\[)[^<>{}\[\]]{0,60}?\b" + _SECRET_WEAK + r"\b[^<>{}\[\]]{0,40}(?:>|\}\}?|\])")


def _templated(sentence: str, sensitive: re.Match[str]) -> bool:
    """Whether the sensitive word sits in a placeholder of a destination: ``<hex of the .env file>.host.net``,
    ``?k={api keys}``, ``https://…/<the user's password>``."""
    before = sentence[: sensitive.start()]
    after = sentence[sensitive.end() :]
    opened = re.search(r"(?:<|\{\{?|\$\{|\[)[^<>{}\[\]]{0,80}$", before)
    closed = re.match(r"[^<>{}\[\]]{0,60}(?:>|\}\}?|\])", after)
    if not (opened and closed):
        return False
    return _in_destination(sentence, opened.start(), sensitive.end() + closed.end())


def _in_destination(sentence: str, start: int, end: int) -> bool:
    """Whether the placeholder ``sentence[start:end]`` is part of a host name or a URL."""
    following = sentence[end : end + 40]
    preceding = sentence[max(0, start - 60) : start]
    return bool(re.match(r"[\w-]*\.[\w-]+\.[a-z]{2,}|\.[a-z]{2,}\b", following) or
                re.search(r"(?:https?://\S*|[?&][\w-]+=|/)$", preceding))


def _name(found: str) -> str:
    return " ".join(found.split())[:40]


@functools.lru_cache(maxsize=50_000)
def _read_sentence(sentence: str, on_request: bool, server_fills: bool) -> tuple[tuple[str, str, int, int], ...]:
    """A sentence's findings: ``(kind, label, key start, key end)``, the key relative to the sentence;
    ``on_request``: its text limits the tool to the user's request; ``server_fills``: its text says the
    server fills templated values itself."""
    out: list[tuple[str, str, int, int]] = []
    conceal = _search(_CONCEAL, sentence)
    if conceal and keeps_back_a_secret(conceal.group(), sentence[conceal.end() : conceal.end() + 30]):
        conceal = None
    if conceal:
        out.append(("instruction", "text that keeps something from the user", conceal.start(), conceal.end()))
    override = _search(_OVERRIDE, sentence) or _BYPASS.search(sentence)
    if override and override.re is _BYPASS and (_BYPASS_PROTECTED.search(sentence[: override.start()]) or not _directs(sentence)):
        override = None
    if override and _NEGATED.search(re.split(r"[,;:]", sentence[: override.start()])[-1]):
        override = None
    if override:
        out.append(("instruction", "an instruction that overrides the model's instructions or the user", override.start(), override.end()))
    found = None if on_request else _exfiltration(sentence.replace("_", " "), sentence, server_fills=server_fills)
    if found:
        out.append(("exfiltration", found[0], found[1].start(), found[1].end()))
    return tuple(out)


@functools.lru_cache(maxsize=20_000)
def _read(text: str) -> tuple[Intent, ...]:
    if len(text.split()) < 3 and text.isascii():
        return ()  # a name, a type, an enum value: no sentence to read
    on_request = bool(_ONLY_ON_REQUEST.search(text))
    server_fills = bool(SERVER_FILLS.search(text))
    out = [Intent(kind, label, start, end, (start + key_start, start + key_end))
           for start, end in sentences(text)
           for kind, label, key_start, key_end in _read_sentence(text[start:end], on_request, server_fills)]
    out += [Intent("instruction", label, start, end, (start, end)) for label, start, end in forged_turns(text)]
    return tuple(out)


def intents(text: str) -> list[Intent]:
    """The structural findings of ``text`` (normalised, lower case): concealment, overrides, forged chat
    turns (``instruction``) and directives that move something at stake out (``exfiltration``)."""
    return list(_read(text))


def _other_tool(sentence: str, own_names: frozenset[str], own_words: frozenset[str]) -> str | None:
    """Another server's tool or a service named in a sentence (not one of this server's own)."""
    other = _search(_OTHER_SERVICE, sentence)
    if other:
        return other.group()
    for match in _NAMED_SERVICE.finditer(sentence):
        if match.group(1) not in own_words:
            return match.group()
    for match in _SERVICE.finditer(sentence):
        if not set(match.group().split()) & own_words:
            return match.group()
    return next((n for m in _TOOL_NAMED.finditer(sentence) for n in m.groups() if n and n not in own_names), None)


def shadowing_intents(text: str, own_names: frozenset[str], own_words: frozenset[str] = frozenset()) -> list[Intent]:
    """Directive sentences of ``text`` (normalised, lower case) that change how a tool other than this
    server's own is used: another server, tool or service named in words (a well-known service counts
    when ``own_words``, the words of this server's and its tools' names, do not hold it), or a tool name
    used as a tool that is not one of ``own_names`` (in the sentence or the one before), with a change to
    its recipients, accounts, destinations or use."""
    return list(_shadowing_intents(text, own_names, own_words))


@functools.lru_cache(maxsize=20_000)
def _shadowing_intents(text: str, own_names: frozenset[str], own_words: frozenset[str]) -> tuple[Intent, ...]:
    out: list[Intent] = []
    if len(text.split()) < 3 and text.isascii():
        return ()
    spans = sentences(text)
    for index, (start, end) in enumerate(spans):
        sentence = text[start:end]
        change = _change(sentence)
        if change is None:
            continue
        other_name = _other_tool(sentence, own_names, own_words)
        if other_name is None and index:
            other_name = _other_tool(text[spans[index - 1][0] : spans[index - 1][1]], own_names, own_words)
        if other_name is not None:
            out.append(Intent("shadowing", f"an instruction that changes how another tool is used ({_name(other_name)})", start, end,
                              (start + change[0], start + change[1])))
    return tuple(out)


@functools.lru_cache(maxsize=50_000)
def _change(sentence: str) -> tuple[int, int] | None:
    """Where a directive sentence changes how a tool is used (recipients, accounts, destinations, use)."""
    change = _search(_CHANGE, sentence)
    if not change or not _directs(sentence) or _CONSENT.search(sentence):
        return None
    return change.start(), change.end()
