from django.urls import path

from submissions.views import SubmitView

urlpatterns = [path("f/<str:slug>", SubmitView.as_view(), name="submit")]
