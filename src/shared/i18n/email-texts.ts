/**
 * The built-in emails' texts in every shipped language (issue 29 point 2): what goes when the tenant has no
 * enabled template of that name. Plain text with `${name}` placeholders (`appName`, `email`, `url`, `code`). The type
 * makes every language complete; test/unit/shared/email-texts.test.ts checks the placeholders match English.
 * Written for Gatehouse, not reviewed by native speakers.
 */
import { catalogueFor, type ShippedLanguage } from "./locales";

export interface EmailText {
  subject: string;
  text: string;
}

/** The built-in emails, by the reference platform's template name. */
export interface EmailTexts {
  reset_email: EmailText;
  verify_email: EmailText;
  /** A passwordless login code (email subject; the text is also the SMS). */
  passwordless_code: EmailText;
  /** An organization invitation (`inviter`, `orgName`, `appName`, `url`, `expires`). */
  user_invitation: EmailText;
  /** A multi-factor enrollment ticket sent by email (`url`). */
  enrollment_email: EmailText;
}

export const EMAIL_TEXTS: Readonly<Record<ShippedLanguage, EmailTexts>> = {
  en: {
    reset_email: {
      subject: "Reset your password",
      text:
        "Someone asked to reset the password of your ${appName} account (${email}).\n\nChoose a new password by opening this link (valid for 24 hours, once):\n\n${url}\n\n" +
        "If you did not ask for this, ignore this email: your password stays the same.",
    },
    verify_email: {
      subject: "Verify your email",
      text: "Please verify the email address you use with ${appName} by opening this link (valid for 5 days, once):\n\n${url}\n\nIf you did not expect this email, ignore it.",
    },
    passwordless_code: {
      subject: "Your verification code for ${appName}",
      text: "${code} is your verification code for ${appName}. It expires in 5 minutes.",
    },
    user_invitation: {
      subject: "${inviter} has invited you to join ${orgName}",
      text: "${inviter} has invited you to join ${orgName} on ${appName}.\n\nAccept the invitation:\n${url}\n\nThis invitation expires on ${expires}.",
    },
    enrollment_email: {
      subject: "Set up multi-factor authentication",
      text: "Secure your account: open ${url} (valid for 5 days, once).",
    },
  },
  de: {
    reset_email: {
      subject: "Passwort zurücksetzen",
      text:
        "Jemand hat angefordert, das Passwort Ihres ${appName}-Kontos (${email}) zurückzusetzen.\n\nÖffnen Sie diesen Link, um ein neues Passwort zu wählen (24 Stunden gültig, einmal verwendbar):\n\n${url}\n\n" +
        "Wenn Sie das nicht angefordert haben, ignorieren Sie diese E-Mail: Ihr Passwort bleibt unverändert.",
    },
    verify_email: {
      subject: "Bestätigen Sie Ihre E-Mail-Adresse",
      text:
        "Bitte bestätigen Sie die E-Mail-Adresse, die Sie für ${appName} verwenden, indem Sie diesen Link öffnen (5 Tage gültig, einmal verwendbar):\n\n${url}\n\n" +
        "Wenn Sie diese E-Mail nicht erwartet haben, ignorieren Sie sie.",
    },
    passwordless_code: {
      subject: "Ihr Bestätigungscode für ${appName}",
      text: "${code} ist Ihr Bestätigungscode für ${appName}. Er läuft in 5 Minuten ab.",
    },
    user_invitation: {
      subject: "${inviter} hat Sie eingeladen, ${orgName} beizutreten",
      text: "${inviter} hat Sie eingeladen, ${orgName} in ${appName} beizutreten.\n\nEinladung annehmen:\n${url}\n\nDiese Einladung läuft am ${expires} ab.",
    },
    enrollment_email: {
      subject: "Mehrstufige Authentifizierung einrichten",
      text: "Schützen Sie Ihr Konto: Öffnen Sie ${url} (5 Tage gültig, einmal verwendbar).",
    },
  },
  fr: {
    reset_email: {
      subject: "Réinitialisez votre mot de passe",
      text:
        "Quelqu’un a demandé la réinitialisation du mot de passe de votre compte ${appName} (${email}).\n\nChoisissez un nouveau mot de passe en ouvrant ce lien (valable 24\u00a0heures, une seule fois)\u00a0:\n\n${url}\n\n" +
        "Si vous n’êtes pas à l’origine de cette demande, ignorez cet e-mail\u00a0: votre mot de passe reste inchangé.",
    },
    verify_email: {
      subject: "Vérifiez votre adresse e-mail",
      text:
        "Veuillez vérifier l’adresse e-mail que vous utilisez avec ${appName} en ouvrant ce lien (valable 5\u00a0jours, une seule fois)\u00a0:\n\n${url}\n\n" +
        "Si vous n’attendiez pas cet e-mail, ignorez-le.",
    },
    passwordless_code: {
      subject: "Votre code de vérification pour ${appName}",
      text: "${code} est votre code de vérification pour ${appName}. Il expire dans 5\u00a0minutes.",
    },
    user_invitation: {
      subject: "${inviter} vous invite à rejoindre ${orgName}",
      text: "${inviter} vous invite à rejoindre ${orgName} sur ${appName}.\n\nAccepter l’invitation :\n${url}\n\nCette invitation expire le ${expires}.",
    },
    enrollment_email: {
      subject: "Configurez l’authentification multifacteur",
      text: "Sécurisez votre compte : ouvrez ${url} (valable 5 jours, une seule fois).",
    },
  },
  es: {
    reset_email: {
      subject: "Restablece tu contraseña",
      text:
        "Alguien ha solicitado restablecer la contraseña de tu cuenta de ${appName} (${email}).\n\nElige una nueva contraseña abriendo este enlace (válido durante 24 horas, una sola vez):\n\n${url}\n\n" +
        "Si no lo has solicitado, ignora este correo: tu contraseña no cambiará.",
    },
    verify_email: {
      subject: "Verifica tu correo electrónico",
      text: "Verifica la dirección de correo electrónico que usas con ${appName} abriendo este enlace (válido durante 5 días, una sola vez):\n\n${url}\n\nSi no esperabas este correo, ignóralo.",
    },
    passwordless_code: {
      subject: "Tu código de verificación para ${appName}",
      text: "${code} es tu código de verificación para ${appName}. Caduca en 5 minutos.",
    },
    user_invitation: {
      subject: "${inviter} te ha invitado a unirte a ${orgName}",
      text: "${inviter} te ha invitado a unirte a ${orgName} en ${appName}.\n\nAcepta la invitación:\n${url}\n\nEsta invitación caduca el ${expires}.",
    },
    enrollment_email: {
      subject: "Configura la autenticación multifactor",
      text: "Protege tu cuenta: abre ${url} (válido durante 5 días, una sola vez).",
    },
  },
  pt: {
    reset_email: {
      subject: "Redefina sua senha",
      text:
        "Alguém pediu para redefinir a senha da sua conta ${appName} (${email}).\n\nEscolha uma nova senha abrindo este link (válido por 24 horas, uma única vez):\n\n${url}\n\n" +
        "Se você não fez este pedido, ignore este e-mail: sua senha continua a mesma.",
    },
    verify_email: {
      subject: "Verifique seu e-mail",
      text: "Verifique o endereço de e-mail que você usa com ${appName} abrindo este link (válido por 5 dias, uma única vez):\n\n${url}\n\nSe você não esperava este e-mail, ignore-o.",
    },
    passwordless_code: {
      subject: "Seu código de verificação para ${appName}",
      text: "${code} é seu código de verificação para ${appName}. Ele expira em 5 minutos.",
    },
    user_invitation: {
      subject: "${inviter} convidou você para participar de ${orgName}",
      text: "${inviter} convidou você para participar de ${orgName} no ${appName}.\n\nAceite o convite:\n${url}\n\nEste convite expira em ${expires}.",
    },
    enrollment_email: {
      subject: "Configure a autenticação multifator",
      text: "Proteja sua conta: abra ${url} (válido por 5 dias, uma única vez).",
    },
  },
  ja: {
    reset_email: {
      subject: "パスワードの再設定",
      text:
        "${appName} のアカウント（${email}）のパスワード再設定が依頼されました。\n\n次のリンクを開いて新しいパスワードを設定してください（有効期間は24時間、1回のみ使用できます）:\n\n${url}\n\n" +
        "お心当たりがない場合は、このメールを無視してください。パスワードは変更されません。",
    },
    verify_email: {
      subject: "メールアドレスの確認",
      text: "${appName} で使用するメールアドレスを確認するため、次のリンクを開いてください（有効期間は5日間、1回のみ使用できます）:\n\n${url}\n\nこのメールにお心当たりがない場合は、無視してください。",
    },
    passwordless_code: {
      subject: "${appName} の確認コード",
      text: "${appName} の確認コードは ${code} です。有効期限は5分です。",
    },
    user_invitation: {
      subject: "${inviter} さんから ${orgName} への招待が届いています",
      text: "${inviter} さんから ${appName} の ${orgName} への招待が届いています。\n\n招待を承諾する:\n${url}\n\nこの招待の有効期限は ${expires} です。",
    },
    enrollment_email: {
      subject: "多要素認証の設定",
      text: "アカウントを保護するため、${url} を開いてください（有効期間は5日間、1回のみ使用できます）。",
    },
  },
  ar: {
    reset_email: {
      subject: "إعادة تعيين كلمة المرور",
      text:
        "طلب أحدهم إعادة تعيين كلمة مرور حسابك في ${appName} (${email}).\n\nاختر كلمة مرور جديدة بفتح هذا الرابط (صالح لمدة 24 ساعة، ولمرة واحدة):\n\n${url}\n\n" +
        "إذا لم تطلب ذلك، فتجاهل هذه الرسالة: ستبقى كلمة مرورك كما هي.",
    },
    verify_email: {
      subject: "تأكيد بريدك الإلكتروني",
      text: "يُرجى تأكيد عنوان البريد الإلكتروني الذي تستخدمه مع ${appName} بفتح هذا الرابط (صالح لمدة 5 أيام، ولمرة واحدة):\n\n${url}\n\nإذا لم تكن تتوقع هذه الرسالة، فتجاهلها.",
    },
    passwordless_code: {
      subject: "رمز التحقق الخاص بك لـ ${appName}",
      text: "${code} هو رمز التحقق الخاص بك لـ ${appName}. تنتهي صلاحيته خلال 5 دقائق.",
    },
    user_invitation: {
      subject: "دعاك ${inviter} للانضمام إلى ${orgName}",
      text: "دعاك ${inviter} للانضمام إلى ${orgName} في ${appName}.\n\nاقبل الدعوة:\n${url}\n\nتنتهي صلاحية هذه الدعوة في ${expires}.",
    },
    enrollment_email: {
      subject: "إعداد المصادقة متعددة العوامل",
      text: "أمِّن حسابك: افتح ${url} (صالح لمدة 5 أيام، ولمرة واحدة).",
    },
  },
};

/** A built-in email in `language` (an offered locale code such as `pt-BR`; English when none matches), filled in. */
export function builtInEmail(language: string, name: keyof EmailTexts, vars: Readonly<Record<string, string>>): EmailText {
  const texts = EMAIL_TEXTS[catalogueFor(language) ?? "en"][name];
  const fill = (s: string) => s.replace(/\$\{([A-Za-z]+)\}/g, (_, key: string) => vars[key] ?? "");
  return { subject: fill(texts.subject), text: fill(texts.text) };
}
