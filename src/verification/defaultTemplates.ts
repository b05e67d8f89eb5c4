/**
 * The built-in verification messages (en, de, fr, es) and the words of the
 * small page a link opens when it has nowhere to redirect. Plain, short,
 * naming the offer and the institution, with no tracking: the HTML loads
 * nothing. A config directory overrides any message part with
 * `templates/<locale>.yaml` (`domain/MessageTemplate.ts` has the rules).
 */
import type { LocaleTemplates } from "../domain/MessageTemplate.ts"

const html = (lines: ReadonlyArray<string>): string =>
  `<!doctype html>\n<html><body style="font-family: sans-serif; line-height: 1.5">\n${lines.map((line) => `<p>${line}</p>`).join("\n")}\n</body></html>\n`

export const defaultTemplates: Readonly<Record<string, LocaleTemplates>> = {
  en: {
    code: {
      subject: "Your code for {{offer}}: {{code}}",
      text: "Your verification code for {{offer}} is:\n\n    {{code}}\n\nEnter it where you asked for it. It works for {{minutes}} minutes and confirms that you can read mail at {{institution}}.\n\nIf you did not ask for this code, ignore this message.\n",
      html: html([
        "Your verification code for {{offer}} is:",
        '<strong style="font-size: 1.5em; letter-spacing: 0.2em">{{code}}</strong>',
        "Enter it where you asked for it. It works for {{minutes}} minutes and confirms that you can read mail at {{institution}}.",
        "If you did not ask for this code, ignore this message."
      ])
    },
    link: {
      subject: "Confirm your address for {{offer}}",
      text: "Open this link to confirm that you can read mail at {{institution}} and get {{offer}}:\n\n{{link}}\n\nIt works for {{minutes}} minutes. If you did not ask for it, ignore this message.\n",
      html: html([
        "Open this link to confirm that you can read mail at {{institution}} and get {{offer}}:",
        '<a href="{{link}}">{{link}}</a>',
        "It works for {{minutes}} minutes. If you did not ask for it, ignore this message."
      ])
    }
  },
  de: {
    code: {
      subject: "Ihr Code für {{offer}}: {{code}}",
      text: "Ihr Bestätigungscode für {{offer}} lautet:\n\n    {{code}}\n\nGeben Sie ihn dort ein, wo Sie ihn angefordert haben. Er gilt {{minutes}} Minuten und bestätigt, dass Sie E-Mails an {{institution}} lesen können.\n\nWenn Sie diesen Code nicht angefordert haben, ignorieren Sie diese Nachricht.\n",
      html: html([
        "Ihr Bestätigungscode für {{offer}} lautet:",
        '<strong style="font-size: 1.5em; letter-spacing: 0.2em">{{code}}</strong>',
        "Geben Sie ihn dort ein, wo Sie ihn angefordert haben. Er gilt {{minutes}} Minuten und bestätigt, dass Sie E-Mails an {{institution}} lesen können.",
        "Wenn Sie diesen Code nicht angefordert haben, ignorieren Sie diese Nachricht."
      ])
    },
    link: {
      subject: "Bestätigen Sie Ihre Adresse für {{offer}}",
      text: "Öffnen Sie diesen Link, um zu bestätigen, dass Sie E-Mails an {{institution}} lesen können, und {{offer}} zu erhalten:\n\n{{link}}\n\nEr gilt {{minutes}} Minuten. Wenn Sie ihn nicht angefordert haben, ignorieren Sie diese Nachricht.\n",
      html: html([
        "Öffnen Sie diesen Link, um zu bestätigen, dass Sie E-Mails an {{institution}} lesen können, und {{offer}} zu erhalten:",
        '<a href="{{link}}">{{link}}</a>',
        "Er gilt {{minutes}} Minuten. Wenn Sie ihn nicht angefordert haben, ignorieren Sie diese Nachricht."
      ])
    }
  },
  fr: {
    code: {
      subject: "Votre code pour {{offer}} : {{code}}",
      text: "Votre code de vérification pour {{offer}} est :\n\n    {{code}}\n\nSaisissez-le là où vous l'avez demandé. Il est valable {{minutes}} minutes et confirme que vous pouvez lire le courrier de {{institution}}.\n\nSi vous n'avez pas demandé ce code, ignorez ce message.\n",
      html: html([
        "Votre code de vérification pour {{offer}} est :",
        '<strong style="font-size: 1.5em; letter-spacing: 0.2em">{{code}}</strong>',
        "Saisissez-le là où vous l'avez demandé. Il est valable {{minutes}} minutes et confirme que vous pouvez lire le courrier de {{institution}}.",
        "Si vous n'avez pas demandé ce code, ignorez ce message."
      ])
    },
    link: {
      subject: "Confirmez votre adresse pour {{offer}}",
      text: "Ouvrez ce lien pour confirmer que vous pouvez lire le courrier de {{institution}} et obtenir {{offer}} :\n\n{{link}}\n\nIl est valable {{minutes}} minutes. Si vous ne l'avez pas demandé, ignorez ce message.\n",
      html: html([
        "Ouvrez ce lien pour confirmer que vous pouvez lire le courrier de {{institution}} et obtenir {{offer}} :",
        '<a href="{{link}}">{{link}}</a>',
        "Il est valable {{minutes}} minutes. Si vous ne l'avez pas demandé, ignorez ce message."
      ])
    }
  },
  es: {
    code: {
      subject: "Tu código para {{offer}}: {{code}}",
      text: "Tu código de verificación para {{offer}} es:\n\n    {{code}}\n\nIntrodúcelo donde lo pediste. Es válido durante {{minutes}} minutos y confirma que puedes leer el correo de {{institution}}.\n\nSi no pediste este código, ignora este mensaje.\n",
      html: html([
        "Tu código de verificación para {{offer}} es:",
        '<strong style="font-size: 1.5em; letter-spacing: 0.2em">{{code}}</strong>',
        "Introdúcelo donde lo pediste. Es válido durante {{minutes}} minutos y confirma que puedes leer el correo de {{institution}}.",
        "Si no pediste este código, ignora este mensaje."
      ])
    },
    link: {
      subject: "Confirma tu dirección para {{offer}}",
      text: "Abre este enlace para confirmar que puedes leer el correo de {{institution}} y obtener {{offer}}:\n\n{{link}}\n\nEs válido durante {{minutes}} minutos. Si no lo pediste, ignora este mensaje.\n",
      html: html([
        "Abre este enlace para confirmar que puedes leer el correo de {{institution}} y obtener {{offer}}:",
        '<a href="{{link}}">{{link}}</a>',
        "Es válido durante {{minutes}} minutos. Si no lo pediste, ignora este mensaje."
      ])
    }
  }
}

/** What the link's page says, by outcome. */
export interface LinkPageWords {
  readonly verified: string
  readonly expired: string
  readonly failed: string
  readonly invalid: string
}

export const linkPageWords: Readonly<Record<string, LinkPageWords>> = {
  en: {
    verified: "Your address is confirmed. You can close this page.",
    expired: "This link has expired. Ask for a new one where you started.",
    failed: "This verification can no longer be confirmed. Start again where you asked for it.",
    invalid: "This link is not valid (a newer message may have replaced it)."
  },
  de: {
    verified: "Ihre Adresse ist bestätigt. Sie können diese Seite schließen.",
    expired: "Dieser Link ist abgelaufen. Fordern Sie dort, wo Sie begonnen haben, einen neuen an.",
    failed: "Diese Bestätigung ist nicht mehr möglich. Beginnen Sie dort, wo Sie sie angefordert haben, von vorn.",
    invalid: "Dieser Link ist nicht gültig (eine neuere Nachricht hat ihn vielleicht ersetzt)."
  },
  fr: {
    verified: "Votre adresse est confirmée. Vous pouvez fermer cette page.",
    expired: "Ce lien a expiré. Demandez-en un nouveau là où vous avez commencé.",
    failed: "Cette vérification ne peut plus être confirmée. Recommencez là où vous l'avez demandée.",
    invalid: "Ce lien n'est pas valable (un message plus récent l'a peut-être remplacé)."
  },
  es: {
    verified: "Tu dirección está confirmada. Puedes cerrar esta página.",
    expired: "Este enlace ha caducado. Pide uno nuevo donde empezaste.",
    failed: "Esta verificación ya no se puede confirmar. Empieza de nuevo donde la pediste.",
    invalid: "Este enlace no es válido (puede que un mensaje más reciente lo haya sustituido)."
  }
}
