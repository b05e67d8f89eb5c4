/**
 * The hosted verification page's words in its built-in languages (en, de,
 * fr, es), the plain words for each reason an address is refused, and the
 * choice of language: `?locale=`, then `Accept-Language`, then the offer's
 * locale, among the built-in languages and those a config directory adds
 * with a complete `page:` section in `templates/<locale>.yaml` (which also
 * overrides single words of a built-in language).
 */
import type { HostedWordKey, HostedWords } from "../../domain/hostedPageWords.ts"
import type { TemplateFile } from "../../domain/MessageTemplate.ts"
import type { ReasonCode } from "../../domain/ReasonCode.ts"

const FALLBACK = "en"

export const builtInWords: Readonly<Record<string, HostedWords>> = {
  en: {
    heading: "Confirm your eligibility",
    intro:
      "Enter the email address your university or school gave you. We send a message to it to confirm it is yours.",
    emailLabel: "Email address at your institution",
    submit: "Continue",
    codeHeading: "Enter your code",
    codeSent: "We sent a code to {{email}}.",
    codeLabel: "Code from the message",
    confirm: "Confirm",
    linkHeading: "Check your inbox",
    linkSent: "We sent a link to {{email}}. Open it to confirm your address, then come back to this page.",
    linkContinue: "I have opened the link",
    resend: "Send a new message",
    resendWait: "You can ask for a new message in {{seconds}} seconds.",
    resendReady: "You can ask for a new message now.",
    resent: "We sent a new message.",
    otherAddress: "Use another address",
    wrongCode: "That code is not correct. Attempts left: {{attempts}}.",
    tooManyAttempts: "Too many wrong codes were entered. Start again to get a new code.",
    expired: "The code or link has expired. Start again to get a new one.",
    startAgain: "Start again",
    ineligible: "This address cannot be used for this offer.",
    limitReached: "This address has already been used for this offer as often as it may be.",
    tooManyMessages: "Too many messages have been sent to this address. Try again in {{minutes}} minutes.",
    rateLimited: "Too many attempts from your connection. Try again in {{seconds}} seconds.",
    unavailable: "Verification is not available right now. Please try again in a few minutes.",
    notFound: "There is nothing to confirm at this address. Check the link that brought you here.",
    redirectRefused: "The site that sent you here may not receive the result, so nothing was started.",
    formExpired: "This form has expired or did not come from this page. Please try again.",
    emailRequired: "Enter your email address.",
    codeRequired: "Enter the code from the message.",
    doneHeading: "Your address is confirmed",
    done: "You can close this page.",
    doneReturn: "Go back to the page you came from to continue.",
    backTo: "Continue on {{site}}",
    support: "Help",
    privacy: "Privacy",
    errorTitle: "There is a problem",
    reasonFormat: "This is not a valid email address.",
    reasonDisposable: "Addresses of temporary mail services cannot be used.",
    reasonRole: "Use your personal address, not a shared one such as info@ or office@.",
    reasonFreeMail: "Use the address your institution gave you, not a free mail account.",
    reasonNotInstitution: "This address does not belong to a university or school this offer is for.",
    reasonPlace: "This offer is not available for institutions in this country or region.",
    reasonOfferClosed: "This offer is not available right now."
  },
  de: {
    heading: "Bestätigen Sie Ihre Berechtigung",
    intro:
      "Geben Sie die E-Mail-Adresse ein, die Ihnen Ihre Hochschule oder Schule gegeben hat. Wir senden eine Nachricht an sie, um zu bestätigen, dass sie Ihnen gehört.",
    emailLabel: "E-Mail-Adresse Ihrer Einrichtung",
    submit: "Weiter",
    codeHeading: "Code eingeben",
    codeSent: "Wir haben einen Code an {{email}} gesendet.",
    codeLabel: "Code aus der Nachricht",
    confirm: "Bestätigen",
    linkHeading: "Sehen Sie in Ihr Postfach",
    linkSent:
      "Wir haben einen Link an {{email}} gesendet. Öffnen Sie ihn, um Ihre Adresse zu bestätigen, und kehren Sie dann zu dieser Seite zurück.",
    linkContinue: "Ich habe den Link geöffnet",
    resend: "Neue Nachricht senden",
    resendWait: "Sie können in {{seconds}} Sekunden eine neue Nachricht anfordern.",
    resendReady: "Sie können jetzt eine neue Nachricht anfordern.",
    resent: "Wir haben eine neue Nachricht gesendet.",
    otherAddress: "Andere Adresse verwenden",
    wrongCode: "Dieser Code ist nicht richtig. Verbleibende Versuche: {{attempts}}.",
    tooManyAttempts:
      "Es wurden zu viele falsche Codes eingegeben. Beginnen Sie von vorn, um einen neuen Code zu erhalten.",
    expired: "Der Code oder Link ist abgelaufen. Beginnen Sie von vorn, um einen neuen zu erhalten.",
    startAgain: "Von vorn beginnen",
    ineligible: "Diese Adresse kann für dieses Angebot nicht verwendet werden.",
    limitReached: "Diese Adresse wurde für dieses Angebot bereits so oft wie erlaubt verwendet.",
    tooManyMessages:
      "An diese Adresse wurden zu viele Nachrichten gesendet. Versuchen Sie es in {{minutes}} Minuten erneut.",
    rateLimited: "Zu viele Versuche von Ihrer Verbindung. Versuchen Sie es in {{seconds}} Sekunden erneut.",
    unavailable: "Die Bestätigung ist gerade nicht verfügbar. Bitte versuchen Sie es in einigen Minuten erneut.",
    notFound: "Unter dieser Adresse gibt es nichts zu bestätigen. Prüfen Sie den Link, der Sie hierher geführt hat.",
    redirectRefused:
      "Die Website, die Sie hierher geschickt hat, darf das Ergebnis nicht erhalten; es wurde nichts begonnen.",
    formExpired: "Dieses Formular ist abgelaufen oder stammt nicht von dieser Seite. Bitte versuchen Sie es erneut.",
    emailRequired: "Geben Sie Ihre E-Mail-Adresse ein.",
    codeRequired: "Geben Sie den Code aus der Nachricht ein.",
    doneHeading: "Ihre Adresse ist bestätigt",
    done: "Sie können diese Seite schließen.",
    doneReturn: "Kehren Sie zu der Seite zurück, von der Sie kamen, um fortzufahren.",
    backTo: "Weiter auf {{site}}",
    support: "Hilfe",
    privacy: "Datenschutz",
    errorTitle: "Es gibt ein Problem",
    reasonFormat: "Das ist keine gültige E-Mail-Adresse.",
    reasonDisposable: "Adressen von Wegwerf-E-Mail-Diensten können nicht verwendet werden.",
    reasonRole: "Verwenden Sie Ihre persönliche Adresse, keine gemeinsame wie info@ oder office@.",
    reasonFreeMail: "Verwenden Sie die Adresse Ihrer Einrichtung, kein kostenloses E-Mail-Konto.",
    reasonNotInstitution: "Diese Adresse gehört zu keiner Hochschule oder Schule, für die dieses Angebot gilt.",
    reasonPlace: "Dieses Angebot gilt nicht für Einrichtungen in diesem Land oder dieser Region.",
    reasonOfferClosed: "Dieses Angebot ist gerade nicht verfügbar."
  },
  fr: {
    heading: "Confirmez votre éligibilité",
    intro:
      "Saisissez l'adresse e-mail que votre université ou école vous a donnée. Nous y envoyons un message pour confirmer qu'elle est bien à vous.",
    emailLabel: "Adresse e-mail de votre établissement",
    submit: "Continuer",
    codeHeading: "Saisissez votre code",
    codeSent: "Nous avons envoyé un code à {{email}}.",
    codeLabel: "Code reçu dans le message",
    confirm: "Confirmer",
    linkHeading: "Consultez votre boîte de réception",
    linkSent:
      "Nous avons envoyé un lien à {{email}}. Ouvrez-le pour confirmer votre adresse, puis revenez sur cette page.",
    linkContinue: "J'ai ouvert le lien",
    resend: "Envoyer un nouveau message",
    resendWait: "Vous pourrez demander un nouveau message dans {{seconds}} secondes.",
    resendReady: "Vous pouvez demander un nouveau message maintenant.",
    resent: "Nous avons envoyé un nouveau message.",
    otherAddress: "Utiliser une autre adresse",
    wrongCode: "Ce code n'est pas correct. Essais restants : {{attempts}}.",
    tooManyAttempts: "Trop de codes erronés ont été saisis. Recommencez pour recevoir un nouveau code.",
    expired: "Le code ou le lien a expiré. Recommencez pour en recevoir un nouveau.",
    startAgain: "Recommencer",
    ineligible: "Cette adresse ne peut pas être utilisée pour cette offre.",
    limitReached: "Cette adresse a déjà été utilisée pour cette offre autant de fois que permis.",
    tooManyMessages: "Trop de messages ont été envoyés à cette adresse. Réessayez dans {{minutes}} minutes.",
    rateLimited: "Trop de tentatives depuis votre connexion. Réessayez dans {{seconds}} secondes.",
    unavailable: "La vérification n'est pas disponible pour le moment. Réessayez dans quelques minutes.",
    notFound: "Il n'y a rien à confirmer à cette adresse. Vérifiez le lien qui vous a mené ici.",
    redirectRefused: "Le site qui vous a envoyé ici ne peut pas recevoir le résultat ; rien n'a été commencé.",
    formExpired: "Ce formulaire a expiré ou ne vient pas de cette page. Veuillez réessayer.",
    emailRequired: "Saisissez votre adresse e-mail.",
    codeRequired: "Saisissez le code reçu dans le message.",
    doneHeading: "Votre adresse est confirmée",
    done: "Vous pouvez fermer cette page.",
    doneReturn: "Revenez à la page d'où vous venez pour continuer.",
    backTo: "Continuer sur {{site}}",
    support: "Aide",
    privacy: "Confidentialité",
    errorTitle: "Il y a un problème",
    reasonFormat: "Ce n'est pas une adresse e-mail valable.",
    reasonDisposable: "Les adresses de services de messagerie temporaire ne peuvent pas être utilisées.",
    reasonRole: "Utilisez votre adresse personnelle, pas une adresse partagée comme info@ ou contact@.",
    reasonFreeMail: "Utilisez l'adresse fournie par votre établissement, pas une messagerie gratuite.",
    reasonNotInstitution: "Cette adresse n'appartient pas à une université ou école concernée par cette offre.",
    reasonPlace: "Cette offre n'est pas disponible pour les établissements de ce pays ou de cette région.",
    reasonOfferClosed: "Cette offre n'est pas disponible pour le moment."
  },
  es: {
    heading: "Confirma que cumples los requisitos",
    intro:
      "Introduce la dirección de correo que te dio tu universidad o centro. Le enviamos un mensaje para confirmar que es tuya.",
    emailLabel: "Correo electrónico de tu centro",
    submit: "Continuar",
    codeHeading: "Introduce tu código",
    codeSent: "Hemos enviado un código a {{email}}.",
    codeLabel: "Código del mensaje",
    confirm: "Confirmar",
    linkHeading: "Revisa tu bandeja de entrada",
    linkSent: "Hemos enviado un enlace a {{email}}. Ábrelo para confirmar tu dirección y vuelve después a esta página.",
    linkContinue: "Ya he abierto el enlace",
    resend: "Enviar un mensaje nuevo",
    resendWait: "Podrás pedir un mensaje nuevo dentro de {{seconds}} segundos.",
    resendReady: "Ya puedes pedir un mensaje nuevo.",
    resent: "Hemos enviado un mensaje nuevo.",
    otherAddress: "Usar otra dirección",
    wrongCode: "Ese código no es correcto. Intentos restantes: {{attempts}}.",
    tooManyAttempts: "Se han introducido demasiados códigos erróneos. Empieza de nuevo para recibir otro código.",
    expired: "El código o el enlace ha caducado. Empieza de nuevo para recibir otro.",
    startAgain: "Empezar de nuevo",
    ineligible: "Esta dirección no se puede usar para esta oferta.",
    limitReached: "Esta dirección ya se ha usado para esta oferta tantas veces como se permite.",
    tooManyMessages: "Se han enviado demasiados mensajes a esta dirección. Inténtalo de nuevo en {{minutes}} minutos.",
    rateLimited: "Demasiados intentos desde tu conexión. Inténtalo de nuevo en {{seconds}} segundos.",
    unavailable: "La verificación no está disponible ahora mismo. Inténtalo de nuevo en unos minutos.",
    notFound: "No hay nada que confirmar en esta dirección. Revisa el enlace que te trajo aquí.",
    redirectRefused: "El sitio que te envió aquí no puede recibir el resultado, así que no se ha iniciado nada.",
    formExpired: "Este formulario ha caducado o no procede de esta página. Inténtalo de nuevo.",
    emailRequired: "Introduce tu dirección de correo.",
    codeRequired: "Introduce el código del mensaje.",
    doneHeading: "Tu dirección está confirmada",
    done: "Puedes cerrar esta página.",
    doneReturn: "Vuelve a la página de la que viniste para continuar.",
    backTo: "Continuar en {{site}}",
    support: "Ayuda",
    privacy: "Privacidad",
    errorTitle: "Hay un problema",
    reasonFormat: "No es una dirección de correo válida.",
    reasonDisposable: "No se pueden usar direcciones de servicios de correo temporal.",
    reasonRole: "Usa tu dirección personal, no una compartida como info@ o secretaria@.",
    reasonFreeMail: "Usa la dirección que te dio tu centro, no una cuenta de correo gratuita.",
    reasonNotInstitution: "Esta dirección no pertenece a ninguna universidad o centro al que se dirija esta oferta.",
    reasonPlace: "Esta oferta no está disponible para centros de este país o región.",
    reasonOfferClosed: "Esta oferta no está disponible ahora mismo."
  }
}

/** The plain words for a refusal's reason code (never the code itself). */
export const reasonWord = (code: ReasonCode | undefined): HostedWordKey => {
  switch (code) {
    case "INVALID_EMAIL_FORMAT":
      return "reasonFormat"
    case "DISPOSABLE_EMAIL":
      return "reasonDisposable"
    case "ROLE_ACCOUNT":
    case "ROLE_NOT_ALLOWED":
      return "reasonRole"
    case "FREE_MAIL_PROVIDER":
      return "reasonFreeMail"
    case "COUNTRY_NOT_ALLOWED":
    case "REGION_NOT_ALLOWED":
      return "reasonPlace"
    case "OFFER_NOT_ACTIVE":
      return "reasonOfferClosed"
    default:
      return "reasonNotInstitution"
  }
}

/** The languages the page is offered in: the built-in ones and those the config gives every word of. */
export const pageLocales = (templates: ReadonlyMap<string, TemplateFile>): ReadonlyArray<string> => [
  ...Object.keys(builtInWords),
  ...[...templates].filter(([locale, file]) => !(locale in builtInWords) && file.page !== undefined).map(([l]) => l)
]

/** The words of `locale` (one of `pageLocales`), the config's overrides laid over the built-in ones. */
export const wordsOf = (locale: string, templates: ReadonlyMap<string, TemplateFile>): HostedWords => {
  const page = templates.get(locale)?.page
  const base = builtInWords[locale] ?? builtInWords[FALLBACK]!
  if (page === undefined) return base
  return { ...base, ...(Object.fromEntries(Object.entries(page).filter(([, v]) => v !== undefined)) as object) }
}

/** The languages of an `Accept-Language` field, best first (q=0 left out). */
const acceptedLanguages = (header: string | undefined): ReadonlyArray<string> =>
  (header ?? "")
    .split(",")
    .map((part, i) => {
      const [tag = "", ...parameters] = part.trim().split(";")
      const q = parameters.map((p) => p.trim()).find((p) => p.startsWith("q="))
      return {
        language: tag.trim().toLowerCase().split(/[-_]/)[0] ?? "",
        q: q === undefined ? 1 : Number(q.slice(2)) || 0,
        i
      }
    })
    .filter((entry) => entry.language !== "" && entry.language !== "*" && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((entry) => entry.language)

/** The page's language: `?locale=`, then `Accept-Language`, then the offer's locale, among `available`; else English. */
export const chooseLocale = (
  available: ReadonlyArray<string>,
  asked: string | undefined,
  acceptLanguage: string | undefined,
  offerLocale: string
): string => {
  const language = (tag: string | undefined) => tag?.toLowerCase().split(/[-_]/)[0]
  const candidates = [language(asked), ...acceptedLanguages(acceptLanguage), language(offerLocale)]
  return candidates.find((candidate) => candidate !== undefined && available.includes(candidate)) ?? FALLBACK
}
