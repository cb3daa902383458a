from django.urls import path

from accounts import views

urlpatterns = [
    path("signup", views.SignupView.as_view(), name="signup"),
    path("verify-email", views.VerifyEmailView.as_view(), name="verify-email"),
    path("resend-otp", views.ResendCodeView.as_view(), name="resend-otp"),
    path("forgot-password", views.ForgotPasswordView.as_view(), name="forgot-password"),
    path("reset-password", views.ResetPasswordView.as_view(), name="reset-password"),
    path("change-password", views.ChangePasswordView.as_view(), name="change-password"),
    path("logout-all", views.LogoutAllView.as_view(), name="logout-all"),
    path("login", views.LoginView.as_view(), name="login"),
    path("token", views.TokenView.as_view(), name="token"),
    path("logout", views.LogoutView.as_view(), name="logout"),
    path("me", views.MeView.as_view(), name="me"),
    path("2fa/setup", views.TwoFactorSetupView.as_view(), name="2fa-setup"),
    path("2fa/enable", views.TwoFactorEnableView.as_view(), name="2fa-enable"),
    path("2fa/disable", views.TwoFactorDisableView.as_view(), name="2fa-disable"),
]
