//! Regex fragments shared by several rules of [`super::RULES`]. Each is a macro that expands to a
//! string literal, so a rule's whole pattern is one literal (`concat!`) that the rule-set
//! document publishes as it is matched.
//!
//! Every pattern runs on folded text (see [`super::fold`]): lower case, compatibility forms and
//! look-alike letters as ASCII, format characters gone, every whitespace run one space, and in
//! names `_`, `-` and camelCase humps read as spaces. `[^.!?]{0,N}` keeps a combination within
//! one sentence; `[^!?]{0,N}` lets it cross the dots of a path, an address or a URL. A space in
//! a pattern is a literal space, not `\s+` (folded text has one space per whitespace run): the
//! literal gate then sees whole phrases (`do not tell`), not their first word, and no window
//! crosses from one text of a batch into the next.

/// Files whose contents are secrets or an agent's configuration.
macro_rules! secret_files {
    () => {
        r"(?:~/\.ssh(?:/(?:id|authorized|identity|\*|\s|$)|[^/\w]|$)|\.ssh/(?:id|authorized|identity|\*|\s|$|[\x22'`)])|\bid[_ ](?:rsa|dsa|ecdsa|ed25519)\b|\bmcp\.json\b|claude[_ ]desktop[_ ]config|\.cursor/|\.aws/credentials|\.netrc\b|\.npmrc\b|\.pypirc\b|\.git-credentials|\.docker/config\.json|\.kube/config|/etc/shadow|/etc/passwd|\.bash_history|\.zsh_history|wallet\.dat|\.gnupg\b|\.config/gh/hosts)"
    };
}
pub(crate) use secret_files;

/// Words for secrets (without a file).
macro_rules! secret_words {
    () => {
        r"(?:api[ _-]?keys?|api[ _-]?tokens?|personal[ _-]access[ _-]tokens?|access[ _-]?tokens?|auth(?:entication|orization)?[ _-]?tokens?|bearer[ _-]?tokens?|refresh[ _-]?tokens?|session[ _-]?(?:tokens?|cookies?)|secret[ _-]?keys?|client[ _-]?secrets?|private[ _-]?keys?|ssh[ _-]?keys?|passwords?|passphrases?|credentials?|secrets?|cookies?|seed[ _-]?phrases?|mnemonic(?: phrases?)?|recovery[ _-]?phrases?|(?:2fa|otp|mfa|backup|recovery|verification)(?: backup)? codes?|credit[ _-]?card(?: numbers?)?|cvv|social security numbers?|\.env(?: file)?|environment variables|env vars|(?:github|gitlab|openai|anthropic|aws|slack|stripe|npm|pypi|hf|huggingface)[ _-]?(?:api[ _-]?)?(?:token|key|secret)s?|\b[a-z0-9]+(?:_[a-z0-9]+)*?_(?:api_)?(?:token|key|secret|password)\b)"
    };
}
pub(crate) use secret_words;

/// A parameter named as the place to put something: "in the `notes` parameter", "as the x
/// argument", "into the sidenote".
macro_rules! param_slot {
    () => {
        r#"(?:\b(?:in|into|as|inside|within|via|through|under|to) (?:the |a |an |this |its |that )?(?:(?:[`'"][^`'"]{1,40}[`'"]|[\w.-]{1,40}) )?(?:parameter|param|argument|arg|field|property)s?\b|\b(?:in|into|as|inside|within|via|through|under|to) (?:the |a |an |this |its |that )?(?:[`'"][^`'"]{1,40}[`'"] )?(?:sidenote|side note|notes?|feedback|metadata|context)s?\b|\b(?:in|into|as) [`'"][\w.-]{1,40}[`'"]|\bas part of (?:the )?(?:query(?: string)?|url|request|arguments?|parameters?|payload|input))"#
    };
}
pub(crate) use param_slot;

/// Verbs that put something into a call.
macro_rules! put_verbs {
    () => {
        r"(?:pass|put|include|insert|add|place|send|give|paste|attach|fill|copy|append|embed|provide|supply|enter|populate|set|store|write)"
    };
}
pub(crate) use put_verbs;

/// The conversation and what the model holds.
macro_rules! conversation {
    () => {
        r"(?:conversation(?:s|[ _-]history|[ _-]log)?|chat[ _-]?(?:history|log|transcript|messages)|message[ _-]history|dialog(?:ue)?[ _-]history|transcript|context[ _-]window|system[ _-]prompt|(?:(?:all|every|the|previous|prior|earlier|past|other|recent|last|\d+) ){1,3}(?:(?:user|assistant|chat) (?:and assistant )?)?(?:messages|exchanges|turns)|user'?s? (?:(?:previous|prior|other|last|recent|earlier|\d+|three|five|ten) ){1,2}messages?|everything the user (?:has )?(?:said|typed|written)|(?:anything|everything) (?:\w+ )?(?:the user|they) (?:has |have )?(?:told you|mentioned|shared|revealed|disclosed)|(?:outputs?|results?) of (?:every|all|each|any) (?:\w+ )?tool calls?|every message (?:the user has sent|in this (?:chat|conversation))|(?:messages?|everything) the user (?:has )?(?:sent|said|typed|written)|(?:whole|entire|full|complete) chat\b|chat so far)"
    };
}
pub(crate) use conversation;

/// Addresses outside: a URL, an e-mail address, a webhook or an IP.
macro_rules! outside_address {
    () => {
        r"(?:https?://|ftp://|wss?://|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b|\b(?:our|my|attacker'?s?|the following|this) webhook\b|\b(?:\d{1,3}\.){3}\d{1,3}\b|\+\d[\d -]{6,18}\d\b|\b[a-z0-9-]+\.(?:com|net|org|io|xyz|ru|cn|top|tk|site|online|info|biz|app|dev|me|cc|pw)/)"
    };
}
pub(crate) use outside_address;

/// The model or agent, addressed.
macro_rules! the_model {
    () => {
        r"(?:ai|assistant|model|llm|agent|claude|chatgpt|gpt|copilot|cursor|gemini|bot)"
    };
}
pub(crate) use the_model;

/// Another tool, named: a snake/kebab-case or backticked name, or "other/another/any other".
macro_rules! other_tool {
    () => {
        r#"(?:(?:the |any )?(?:[`'"][\w.-]{2,60}[`'"]|[a-z0-9]+[_.][a-z0-9_.]+) (?:tool|function|command|method)|(?:any|all|every|each) other (?:tools?|functions?|servers?)|(?:tools?|functions?) (?:from|of|on|in) (?:other|another|any other|different) (?:mcp )?servers?)"#
    };
}
pub(crate) use other_tool;
